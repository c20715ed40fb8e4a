#include "agent/readiness/node_ready_reporter.h"

#include "agent/base/log.h"
#include "agent/kube/client/lease_client.h"
#include "agent/readiness/ready_records.h"

namespace nodehook {
namespace {

// What the writer reads of a result: its state and outcome. Messages alone start no write.
bool SameOutcomes(const std::map<std::string, NodeResult>& a, const std::map<std::string, NodeResult>& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.state != ib->second.state || ia->second.failed != ib->second.failed) {
      return false;
    }
  }
  return true;
}

}  // namespace

NodeReadyReporter::NodeReadyReporter(const WatchedResource& resource, KubeClient& client, Clock& clock,
                                     const ServerClock& server, NodeReadyReporterOptions options)
    : resource_(resource),
      rid_(RolloutIdOf(resource.ref)),
      name_(ReadyRecordName(rid_, options.node)),
      client_(client),
      clock_(clock),
      server_(server),
      options_(std::move(options)) {}

void NodeReadyReporter::Run(const CancelToken& stop) {
  do {
    (void)Round();  // logged inside; the next round tries again
  } while (SleepUnlessCancelled(clock_, options_.round, stop));
}

Status NodeReadyReporter::Round() {
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, name_};
  if (loaded_ && clock_.Now() >= recheck_at_) loaded_ = false;  // deleted or edited by someone since?
  if (!loaded_) {
    auto stored = client_.Get(ref);
    if (stored.ok()) {
      auto parsed = ParseRolloutLease(stored->json);
      // An unreadable record is written over: only this node writes it.
      written_ = parsed.ok() ? std::move(*parsed) : RolloutLease{};
      written_.resource_version = stored->meta.resource_version;
      if (written_.kind.empty()) written_.kind = "unreadable";
    } else if (stored.status().code() != StatusCode::kNotFound) {
      NoteOutcome(stored.status());
      return stored.status();
    } else if (read_once_) {
      written_ = RolloutLease{};  // deleted by someone: created again
    } else if (Status found = LoadHashed(); !found.ok()) {
      NoteOutcome(found);
      return found;
    }
    loaded_ = read_once_ = true;
    recheck_at_ = clock_.Now() + options_.recheck;
  }
  if (!options_.report) return Status::Ok();
  ReadyReport report = options_.report();
  NodePresence presence = options_.presence ? options_.presence() : NodePresence{};
  if (presence.gone) return Status::Ok();  // its Node left: the garbage collector takes the record
  if (!report.synced) {
    // Counted by the fleet at once, before its first list is in: a node still listing is waited
    // for, not missed. Its results come once it knows its objects.
    if (!written_.kind.empty()) return Status::Ok();
    report = ReadyReport{};
  }
  std::optional<RolloutLease> wanted = Wanted(report, presence);
  if (report.synced && !synced_once_) {
    synced_once_ = true;
    if (!wanted) {
      Log(LogLevel::kInfo, "ready record kept",
          {{"resource", resource_.ref.Id()}, {"lease", name_}, {"objects", written_.results.size()},
           {"next", "write it when a result changes"}});
    }
  }
  if (!wanted) return Status::Ok();
  Status written = Write(*wanted);
  NoteOutcome(written);
  if (written.ok() && !hashed_left_.empty()) {
    Status deleted = client_.Delete(ObjectRef{KubeLeaseClient::LeasesResource(), options_.namespace_name, hashed_left_});
    Log(LogLevel::kInfo, "ready record renamed",
        {{"resource", resource_.ref.Id()}, {"from", hashed_left_}, {"to", name_},
         {"next", deleted.ok() || deleted.code() == StatusCode::kNotFound
                      ? std::string("old record deleted")
                      : "old record left (" + deleted.ToString() + "); its Node's deletion takes it"}});
    hashed_left_.clear();
  }
  return written;
}

Status NodeReadyReporter::LoadHashed() {
  const std::string hashed = HashedNodeLeaseName("ready", rid_, options_.node);
  if (hashed == name_) return Status::Ok();
  auto stored = client_.Get(ObjectRef{KubeLeaseClient::LeasesResource(), options_.namespace_name, hashed});
  if (!stored.ok()) return stored.status().code() == StatusCode::kNotFound ? Status::Ok() : stored.status();
  auto parsed = ParseRolloutLease(stored->json);
  if (!parsed.ok() || parsed->holder != options_.node) return Status::Ok();
  // An earlier version's record: its results move to the new name (written as new), then it goes.
  written_ = std::move(*parsed);
  written_.name = name_;
  written_.resource_version.clear();
  written_.kind = "moved";  // not "node": the first round writes it under the new name
  hashed_left_ = hashed;
  return Status::Ok();
}

std::optional<RolloutLease> NodeReadyReporter::Wanted(const ReadyReport& report, const NodePresence& presence) const {
  RolloutLease record;
  record.name = name_;
  record.kind = "node";
  record.holder = options_.node;
  record.lease_duration_seconds = 86400;  // a record, not a lock: nobody judges its age
  record.resource = resource_.ref.Id();
  record.scope = resource_.ref.namespace_name;
  // Not known yet (the Node watch lists after the objects' at start): what the record says stands.
  record.owner_uid = presence.uid.empty() ? written_.owner_uid : presence.uid;
  record.labels = presence.labels ? presence.labels : written_.labels;
  const int64_t now_ms = server_.NowMs();
  for (const std::string& uid : report.known) {
    auto before = written_.results.find(uid);
    auto now = report.results.find(uid);
    if (now == report.results.end()) {
      // Not settled here yet: what the record said stands (its state tells the writer how old it is).
      if (before != written_.results.end()) record.results.emplace(uid, before->second);
      continue;
    }
    NodeResult result = now->second;
    result.canary = false;
    const bool same = before != written_.results.end() && before->second.state == result.state &&
                      before->second.failed == result.failed;
    result.at_ms = same ? before->second.at_ms : now_ms;
    if (!result.failed) result.message.clear();
    record.results.emplace(uid, std::move(result));
  }
  const bool unchanged = written_.kind == "node" && SameOutcomes(record.results, written_.results) &&
                         record.labels == written_.labels && record.owner_uid == written_.owner_uid &&
                         written_.holder == options_.node;
  if (unchanged) return std::nullopt;
  record.resource_version = written_.resource_version;
  return record;
}

Status NodeReadyReporter::Write(RolloutLease& record) {
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, name_};
  bool done = false;
  for (int attempt = 0; attempt < 2 && !done; ++attempt) {
    std::string body = ReadyRecordJson(options_.namespace_name, rid_, record);
    Status st;
    if (record.resource_version.empty()) {
      st = client_.Create(ref.resource, ref.namespace_name, body);
      if (st.ok() || st.code() == StatusCode::kConflict) {  // created now, or it was there
        auto stored = client_.Get(ref);
        if (!stored.ok()) return stored.status();
        record.resource_version = stored->meta.resource_version;
        done = st.ok();
        continue;  // write ours over what was there
      }
    } else {
      auto stored = client_.Replace(ref, body);
      if (stored.ok()) {
        record.resource_version = stored->meta.resource_version;
        done = true;
        continue;
      }
      st = stored.status();
      if (st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound) {
        // Only this node writes its record: a stale version (an earlier answer was lost) or a
        // deleted Lease is taken as it is now, then written again.
        auto now = client_.Get(ref);
        record.resource_version = now.ok() ? now->meta.resource_version : "";
        continue;
      }
    }
    return st;
  }
  if (!done) return Status(StatusCode::kConflict, "ready record " + name_ + " changed while it was written");
  written_ = record;
  ++writes_;
  return Status::Ok();
}

void NodeReadyReporter::NoteOutcome(const Status& written) {
  if (written.ok()) {
    if (failing_) {
      Log(LogLevel::kInfo, "ready record written",
          {{"resource", resource_.ref.Id()}, {"lease", name_}, {"next", "write it again when a result changes"}});
    }
    failing_ = false;
    return;
  }
  if (!failing_) {
    Log(LogLevel::kWarn, "ready record not written",
        {{"resource", resource_.ref.Id()}, {"lease", name_}, {"error", written.ToString()},
         {"next", "try again at the next round"}});
  }
  failing_ = true;
}

}  // namespace nodehook
