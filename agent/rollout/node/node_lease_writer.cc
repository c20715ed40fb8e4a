#include "agent/rollout/node/node_lease_writer.h"

#include <algorithm>

#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/kube/client/lease_client.h"
#include "agent/rollout/rules/node_results.h"

namespace nodehook {
namespace {

// A node Lease is never judged by expiry; the duration only has to be valid.
constexpr int kNodeLeaseSeconds = 86400;

}  // namespace

NodeLeaseWriter::NodeLeaseWriter(const WatchedResource& resource, KubeClient& client, const BoardReader& board,
                                 Clock& monotonic, const ServerClock& server, NodeLeaseWriterOptions options)
    : resource_(resource),
      rid_(RolloutIdOf(resource.ref)),
      client_(client),
      board_(board),
      monotonic_(monotonic),
      server_(server),
      options_(std::move(options)) {}

NodePresence NodeLeaseWriter::Presence() const {
  return options_.presence ? options_.presence() : NodePresence{};
}

Status NodeLeaseWriter::Register() {
  const std::string name = NodeLeaseName(rid_, options_.node);
  RolloutLease seen = board_.Lease(name);
  const std::string hashed = HashedNodeLeaseName("rollout", rid_, options_.node);
  if (seen.kind.empty() && hashed != name) {
    // Written under the hashed name by an earlier version: its results move to the new name,
    // then the old Lease goes (two Leases of one holder would both count on the board).
    RolloutLease old = board_.Lease(hashed);
    if (old.kind == "node" && old.holder == options_.node && !board_.Deleted(hashed)) {
      for (auto& [uid, result] : old.results) results_.emplace(uid, result);
      Status moved = Write();
      if (!moved.ok()) return moved;
      Status deleted = client_.Delete(ObjectRef{KubeLeaseClient::LeasesResource(), options_.namespace_name, hashed});
      Log(LogLevel::kInfo, "rollout node lease renamed",
          {{"resource", resource_.ref.Id()}, {"from", hashed}, {"to", name}, {"results", results_.size()},
           {"next", deleted.ok() || deleted.code() == StatusCode::kNotFound
                        ? std::string("old Lease deleted")
                        : "old Lease left (" + deleted.ToString() + "): it expires unrenewed"}});
      return Status::Ok();
    }
  }
  if (!seen.kind.empty()) {
    // Results written before a restart stay: they are what the fleet knows of this node.
    for (auto& [uid, result] : seen.results) results_.emplace(uid, result);
    Know(seen.resource_version);  // "" when deleted since: created again
    owner_written_ = seen.owner_uid;
    labels_written_ = seen.labels;
    const NodePresence presence = Presence();
    if (!board_.Deleted(name) && seen.policy_json == SharedPolicyJson(resource_) && seen.holder == options_.node &&
        seen.owner_uid == presence.uid && seen.labels == presence.labels) {
      return Status::Ok();
    }
  }
  return Write();
}

Status NodeLeaseWriter::PutResult(const std::string& uid, const NodeResult& result) {
  results_[uid] = result;
  return Write();
}

void NodeLeaseWriter::Withdraw(const std::string& uid) {
  requests_.erase(uid);
  if (requests_written_.count(uid) > 0) (void)Write();
}

Status NodeLeaseWriter::Write() {
  RolloutLease lease;
  lease.name = NodeLeaseName(rid_, options_.node);
  lease.kind = "node";
  lease.holder = options_.node;
  lease.lease_duration_seconds = kNodeLeaseSeconds;
  lease.renew_time = MicroTime(FromMillis(server_.NowMs()));  // kubectl ages it by this clock
  lease.resource = resource_.ref.Id();
  lease.scope = resource_.ref.namespace_name;
  lease.policy_json = SharedPolicyJson(resource_);
  lease.results = results_;
  lease.requests = requests_;
  const NodePresence presence = Presence();
  if (presence.gone) {
    // Deleted with its Node by the garbage collector, or about to be: written again, it would
    // count this node in the fleet for ever.
    dirty_ = true;
    return Status(StatusCode::kNotFound, "node " + options_.node + " is deleted: it has left the fleet");
  }
  lease.owner_uid = presence.uid;
  lease.labels = presence.labels;
  lease.results_json = NoteResultsBudget();
  Status st = WriteLease(lease);
  if (st.ok()) {
    requests_written_ = requests_;
    results_written_ = results_.size() - results_left_out_;
    owner_written_ = presence.uid;
    labels_written_ = presence.labels;
    dirty_ = false;
    refusals_ = 0;
    return st;
  }
  // Tried again at the renewal rounds, backing off: a refusal that lasts (403, 422) must not
  // become a write of the whole Lease every few seconds for ever.
  dirty_ = true;
  refusals_ = std::min(refusals_ + 1, 16);
  retry_at_ = monotonic_.Now() + std::min<Duration>(options_.retry * (1 << std::min(refusals_, 8)),
                                                    std::chrono::minutes(5));
  return st;
}

std::string NodeLeaseWriter::NoteResultsBudget() {
  EncodedResults encoded = EncodeNodeResults(results_);
  if (encoded.left_out == results_left_out_) return std::move(encoded.json);
  results_left_out_ = encoded.left_out;
  Log(encoded.left_out > 0 ? LogLevel::kError : LogLevel::kInfo, "rollout results over budget",
      {{"resource", resource_.ref.Id()}, {"objects", results_.size()}, {"left_out", encoded.left_out},
       {"next", encoded.left_out > 0 ? "the oldest done results are left out of this node's Lease: rollouts of those "
                                       "objects wait for this node until it handles them again"
                                     : "every result fits again"}});
  return std::move(encoded.json);
}

Status NodeLeaseWriter::WriteLease(RolloutLease& lease) {
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, lease.name};
  for (int attempt = 0; attempt < 2; ++attempt) {
    lease.resource_version = version_;
    std::string body = RolloutLeaseJson(options_.namespace_name, rid_, lease);
    Status st;
    if (version_.empty()) {
      st = client_.Create(ref.resource, ref.namespace_name, body);
      if (st.ok() || st.code() == StatusCode::kConflict) {  // created now, or it was there
        auto stored = client_.Get(ref);
        if (!stored.ok()) return stored.status();
        Know(stored->meta.resource_version);
        if (st.ok()) return st;
        continue;  // write ours over what was there
      }
    } else {
      auto stored = client_.Replace(ref, body);
      if (stored.ok()) {
        Know(stored->meta.resource_version);
        return Status::Ok();
      }
      st = stored.status();
      if (st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound) {
        // Only this node writes its Lease: a stale version (an earlier write's answer was lost)
        // or a deleted Lease is taken as it is now, then written again.
        auto now = client_.Get(ref);
        Know(now.ok() ? now->meta.resource_version : "");
        continue;
      }
    }
    return st;
  }
  return Status(StatusCode::kConflict, "node lease " + lease.name + " changed while it was written");
}

void NodeLeaseWriter::NoteNodePresence() {
  const NodePresence presence = Presence();
  if (presence.gone != left_) {
    left_ = presence.gone;
    Log(LogLevel::kWarn, left_ ? "rollout node left" : "rollout node back",
        {{"resource", resource_.ref.Id()}, {"node", options_.node},
         {"next", left_ ? "its node Lease is not written again (the garbage collector deletes it with the Node); the "
                          "others stop counting this node"
                        : "write its node Lease again"}});
  }
  if (!presence.gone && !version_.empty() &&
      ((!presence.uid.empty() && presence.uid != owner_written_) || presence.labels != labels_written_)) {
    // The Node became known after the Lease was written (or was created anew): name it as owner.
    // Its labels changed: the others judge targeting and holds by them.
    dirty_ = true;
    retry_at_ = TimePoint{};
  }
}

void NodeLeaseWriter::Renew() {
  NoteNodePresence();
  const std::string name = NodeLeaseName(rid_, options_.node);
  if (board_.Deleted(name)) {
    // Deleted by someone else: this node would drop out of the fleet. Written again as it was.
    version_.clear();
    dirty_ = true;
  } else if (EditedElsewhere(board_.Lease(name))) {
    // Edited by someone else (kubectl edit, an annotation removed): a request taken out would
    // never be granted, a result taken out would hold the rollout's completion. Written again
    // as it should be; what others added (an annotation of their own) is written over too.
    Log(LogLevel::kWarn, "rollout node lease edited",
        {{"resource", resource_.ref.Id()}, {"lease", name}, {"next", "write it again as this node knows it"}});
    dirty_ = true;
    retry_at_ = TimePoint{};
  }
  if (dirty_ && monotonic_.Now() >= retry_at_) (void)Write();
}

bool NodeLeaseWriter::EditedElsewhere(const RolloutLease& seen) const {
  if (seen.kind.empty() || seen.resource_version.empty() || version_.empty() || dirty_) return false;
  // A version this node wrote (or read before writing) is its own, however late the watch brings it.
  if (std::find(known_versions_.begin(), known_versions_.end(), seen.resource_version) != known_versions_.end()) {
    return false;
  }
  return seen.holder != options_.node || seen.requests != requests_written_ ||
         seen.results.size() != results_written_;
}

void NodeLeaseWriter::Know(const std::string& version) {
  version_ = version;
  if (version.empty()) return;
  // Enough for a watch a few writes behind; one further behind costs one needless write.
  if (known_versions_.size() == 8) known_versions_.erase(known_versions_.begin());
  known_versions_.push_back(version);
}

}  // namespace nodehook
