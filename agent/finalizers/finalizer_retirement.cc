#include "agent/finalizers/finalizer_retirement.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"
#include "agent/config/config.h"
#include "agent/finalizers/finalizer_sweep.h"

namespace nodehook {
namespace {

std::string FinalizerOf(const FinalizerDomain& domain, const std::string& own) {
  return domain.kind == FinalizerKind::kNode ? own : kSingletonFinalizer;
}

std::string Scope(const FinalizerDomain& domain) {
  return domain.resource.Id() + (domain.resource.namespace_name.empty() ? "" : " in " + domain.resource.namespace_name);
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

FinalizerRetirement::FinalizerRetirement(KubeClient& client, StateStore& store, Clock& clock,
                                         RetirementOptions options)
    : client_(client), store_(store), clock_(clock), options_(std::move(options)) {}

Status FinalizerRetirement::Load() {
  if (loaded_) return Status::Ok();
  Result<std::optional<std::string>> note = store_.ReadNote(kFinalizerDomainsNote);
  if (!note.ok()) return note.status();
  std::vector<FinalizerDomain> before;
  note_ = note->value_or("");
  if (note->has_value()) {
    Result<std::vector<FinalizerDomain>> decoded = DecodeDomains(**note);
    if (!decoded.ok()) {
      // Written only by this code: a bad note is a damaged file. Keeping it unread would hold
      // nothing back; releasing by guess could skip a delete hook. Say so and start afresh.
      Log(LogLevel::kError, "finalizer domains unreadable",
          {{"error", decoded.status().ToString()},
           {"next", "record what the config serves now; finalizers of resources served before are not released"}});
    } else {
      before = std::move(decoded).value();
    }
  }
  recorded_ = UnionOf(before, options_.serving);
  Status written = Record();
  if (!written.ok()) return written;
  for (const FinalizerDomain& d : RetiredDomains(before, options_.serving)) {
    retired_.push_back(Retired{d, clock_.Now(), Duration(0), ""});
    Log(LogLevel::kInfo, "finalizers retiring",
        {{"resource", Scope(d)}, {"finalizer", FinalizerOf(d, options_.own_finalizer)}, {"kind", d.KindName()},
         {"reason", "this node no longer serves the resource in this mode"},
         {"next", d.kind == FinalizerKind::kNode
                      ? "remove this node's finalizer from its objects"
                      : "remove it from the objects once no agent runs an older pod template"}});
  }
  pending_ = retired_.size();
  loaded_ = true;
  return Status::Ok();
}

Status FinalizerRetirement::Record() {
  std::string text = EncodeDomains(recorded_);
  if (text == note_) return Status::Ok();  // a start with an unchanged config writes nothing
  Status written = store_.WriteNote(kFinalizerDomainsNote, text);
  if (written.ok()) note_ = std::move(text);
  return written;
}

FinalizerRetirement::Outcome FinalizerRetirement::Sweep(const FinalizerDomain& domain) {
  if (domain.kind == FinalizerKind::kSingleton) {
    if (!options_.pods_on_other_revisions) {
      return {Outcome::kWaiting,
              "the agent's own pod is not known (POD_NAMESPACE, POD_NAME): cannot tell whether an agent on the old "
              "config still runs"};
    }
    Result<std::vector<std::string>> others = options_.pods_on_other_revisions();
    if (!others.ok()) {
      std::string why = "cannot tell which agents run an older pod template: " + others.status().ToString();
      if (others.status().code() == StatusCode::kForbidden) {
        why += " (the agents may read the pods of their namespace with `nodehook rbac --config NEW --previous OLD`)";
      }
      return {Outcome::kWaiting, why};
    }
    if (!others->empty()) return {Outcome::kWaiting, "agent pods still on another pod template: " + Joined(*others)};
  }
  const std::string finalizer = FinalizerOf(domain, options_.own_finalizer);
  const std::vector<FinalizerDomain>& serving = options_.serving;
  auto choose = [&](const ObjectMeta& object, const std::string& f) {
    return f == finalizer && !StillServed(serving, domain.kind, domain.resource, object.namespace_name);
  };
  SweepReport report;
  report.failed = [&](const ObjectMeta& object, const std::string& what, const std::string& why) {
    Log(LogLevel::kWarn, "retired finalizer not removed",
        {{"resource", domain.resource.Id()}, {"object", object.Key()}, {"uid", object.uid},
         {"finalizer", finalizer}, {"error", "cannot " + what + ": " + why}, {"next", "sweep again later"}});
  };
  Result<SweepCounts> counts = SweepFinalizers(client_, domain.resource, choose, report);
  if (!counts.ok()) {
    if (counts.status().code() == StatusCode::kNotFound) {
      Log(LogLevel::kInfo, "retired finalizers released",
          {{"resource", Scope(domain)}, {"finalizer", finalizer}, {"objects", 0},
           {"reason", "the resource is no longer served (its CRD is gone): no object is left"}, {"next", "forget it"}});
      return {Outcome::kDone, ""};
    }
    std::string why = "cannot list " + Scope(domain) + ": " + counts.status().ToString();
    if (counts.status().code() == StatusCode::kForbidden) {
      why += " (the agents' rights went with the config: keep get, list and patch on it until this is done, e.g. "
             "`nodehook rbac --config NEW --previous OLD`)";
    }
    return {Outcome::kFailed, why};
  }
  if (counts->failures > 0) {
    return {Outcome::kFailed, std::to_string(counts->failures) + " object(s) could not be released"};
  }
  Log(LogLevel::kInfo, "retired finalizers released",
      {{"resource", Scope(domain)}, {"finalizer", finalizer}, {"objects", counts->released_objects},
       {"reason", "this node no longer serves the resource in this mode; no delete hook ran for them"},
       {"next", "forget it"}});
  if (options_.node_event && counts->released_objects > 0) {
    options_.node_event("RetiredFinalizersReleased", false,
                        "Removed " + finalizer + " from " + std::to_string(counts->released_objects) + " object(s) of " +
                            Scope(domain) + ", which this node no longer serves in " + domain.KindName() +
                            " mode (no delete hook ran)");
  }
  return {Outcome::kDone, ""};
}

std::optional<TimePoint> FinalizerRetirement::Step() {
  if (!loaded_) {
    Status loaded = Load();
    if (!loaded.ok()) {
      Log(LogLevel::kWarn, "finalizer domains not recorded",
          {{"error", loaded.ToString()}, {"next", "try again in " + std::to_string(options_.first_retry.count() / 1000) + "s"}});
      return clock_.Now() + options_.first_retry;
    }
  }
  bool changed = false;
  for (auto it = retired_.begin(); it != retired_.end();) {
    if (clock_.Now() < it->due) {
      ++it;
      continue;
    }
    Outcome outcome = Sweep(it->domain);
    if (outcome.state == Outcome::kDone) {
      recorded_.erase(std::remove_if(recorded_.begin(), recorded_.end(),
                                     [&](const FinalizerDomain& d) { return d.SameAs(it->domain); }),
                      recorded_.end());
      recorded_ = UnionOf(recorded_, options_.serving);
      it = retired_.erase(it);
      changed = true;
      continue;
    }
    it->backoff = it->backoff.count() == 0 ? options_.first_retry : std::min(it->backoff * 2, options_.max_retry);
    it->due = clock_.Now() + it->backoff;
    const std::string finalizer = FinalizerOf(it->domain, options_.own_finalizer);
    const std::string next = "try again in " + std::to_string(it->backoff.count() / 1000) + "s";
    if (outcome.state == Outcome::kFailed) {
      Log(LogLevel::kWarn, "retired finalizers not released",
          {{"resource", Scope(it->domain)}, {"finalizer", finalizer}, {"error", outcome.why}, {"next", next}});
    } else if (outcome.why != it->last_wait) {
      Log(LogLevel::kInfo, "retired finalizers waiting",
          {{"resource", Scope(it->domain)}, {"finalizer", finalizer}, {"reason", outcome.why}, {"next", next}});
    }
    it->last_wait = outcome.state == Outcome::kWaiting ? outcome.why : "";
    ++it;
  }
  pending_ = retired_.size();
  if (changed) {
    // Until this is written a restart sweeps the released domains again: harmless.
    Status written = Record();
    if (!written.ok()) {
      Log(LogLevel::kWarn, "finalizer domains not recorded",
          {{"error", written.ToString()}, {"next", "a restart looks at the released resources again"}});
    }
  }
  if (retired_.empty()) return std::nullopt;
  TimePoint next = retired_.front().due;
  for (const Retired& r : retired_) next = std::min(next, r.due);
  return next;
}

void FinalizerRetirement::Run(const CancelToken& stop) {
  CancelRegistration wake(stop, [this] {
    MutexLock lock(&mu_);
    cv_.notify_all();
  });
  while (!stop.cancelled()) {
    std::optional<TimePoint> next = Step();
    if (!next) return;
    MutexLock lock(&mu_);
    WaitUntil(clock_, cv_, mu_, *next, [&] { return stop.cancelled(); });
  }
}

}  // namespace nodehook
