#include "agent/core/reconciler.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/core/essence.h"
#include "agent/core/hook_call.h"
#include "agent/core/singleton_progress.h"

namespace nodehook {
namespace {

const char* const kDeletedTarget = "deleted";
const char* const kPermanentFailure = "permanent_failure";
const char* const kRunning = "running";
const char* const kInterrupted = "interrupted";
// Finalizer mode: the delete hook succeeded and this node's finalizer is still to come off. Never
// runs the hook again, whatever the object does meanwhile.
const char* const kFinalizerPending = "finalizer_pending";
// How soon to look again when a finalizer edit or a Node read failed.
constexpr Duration kFinalizerRetry{1000};
// Not a hook: stores the diffbase of an object this node handled before its state was lost.
const char* const kReasonAdopt = "adopt";

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

}  // namespace

struct Reconciler::Plan {
  std::string reason;
  ObjectMeta meta;
  std::string old_object;   // JSON of the last handled (or last seen, for delete) state
  std::string new_object;   // JSON of the current state; "" on delete
  std::string old_essence;
  std::string new_essence;  // "" on delete
  std::string target;       // what a retrying handler works towards
  ObjectPtr live_object;    // the object as it is now, when it still exists (finalizer mode)
};

Reconciler::Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, ReconcilerOptions options)
    : store_(store),
      runner_(runner),
      clock_(clock),
      options_(std::move(options)),
      hook_metrics_(options_.metrics),
      scratch_(options_.work_dir),
      rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

Duration Reconciler::RetryDelay(int retries) {
  double delay = static_cast<double>(options_.retry_base.count());
  for (int i = 1; i < retries && delay < static_cast<double>(options_.retry_max.count()); ++i) delay *= options_.retry_factor;
  delay = std::min(delay, static_cast<double>(options_.retry_max.count()));
  if (options_.retry_jitter > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    delay *= std::uniform_real_distribution<double>(1 - options_.retry_jitter, 1 + options_.retry_jitter)(rng_);
  }
  return SaturatingMillis(std::max(delay, 0.0));  // never negative, never an overflowing cast
}

void Reconciler::ExpectAdoption(int lists) {
  std::lock_guard<std::mutex> lock(mu_);
  adopt_lists_pending_ = lists;
}

void Reconciler::AdoptOnce(const std::vector<std::string>& uids) {
  std::lock_guard<std::mutex> lock(mu_);
  adopt_.insert(uids.begin(), uids.end());
  if (adopt_lists_pending_ > 0) --adopt_lists_pending_;
}

bool Reconciler::TakeAdoption(const std::string& uid) {
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!adopt_.erase(uid)) return false;
    done = adopt_.empty() && adopt_lists_pending_ == 0;
  }
  if (done) {
    Status cleared = store_.SetAdoptExisting(false);
    Log(cleared.ok() ? LogLevel::kInfo : LogLevel::kError, "adoption finished",
        {{"error", cleared.ToString()}, {"next", "handle new objects with create again"}});
  }
  return true;
}

bool Reconciler::FirstSight(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.count(uid) == 0;
}

void Reconciler::MarkSeen(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.insert(uid);
}

void Reconciler::Unsee(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.erase(uid);
}

namespace {

std::optional<Duration> Earliest(std::optional<Duration> a, std::optional<Duration> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

std::optional<Duration> Reconciler::Reconcile(const WatchedResource& resource, ObjectCache& cache,
                                              const std::string& uid, const CancelToken& stop) {
  // Stored events carry their own object, so they are handled even after the object is gone.
  std::optional<Duration> events_again;
  auto event_hook = resource.hooks.find(kReasonEvent);
  if (event_hook != resource.hooks.end()) events_again = HandleEvents(resource, event_hook->second, uid, stop);
  return Earliest(events_again, ReconcileLevel(resource, cache, uid, stop));
}

void Reconciler::DropBytes(const WatchedResource& resource, ObjectCache& cache, const ObjectMeta& handled) {
  // Finalizer mode, node targeting, check and snapshot hooks act on the live object (its
  // finalizers, its node selector against changed Node labels, the periodic and the whole-set
  // runs) without a change to it: those keep the bytes.
  if (resource.finalizer || !resource.node_selector_path.empty() || resource.hooks.count(kReasonCheck) > 0 ||
      resource.hooks.count(kReasonSnapshot) > 0 || handled.deleting) {
    return;
  }
  cache.DropBytes(handled.uid, handled.resource_version);
}

std::optional<Duration> Reconciler::ReconcileLevel(const WatchedResource& resource, ObjectCache& cache,
                                                   const std::string& uid, const CancelToken& stop) {
  std::optional<CachedObject> entry = cache.Get(uid);
  if (!entry) return std::nullopt;
  std::shared_ptr<const CancelToken> term;
  if (resource.singleton) {
    term = leadership_ ? leadership_->TermIfMayStart() : nullptr;
    // Not the leader: the agent looks at every object again when a term starts.
    if (!term) return entry->gone ? KeepGoneSingleton(cache, uid) : std::nullopt;
  }
  // A singleton hook stops when the agent stops or the term ends, whichever comes first.
  CancelToken hook_stop;
  std::optional<CancelRegistration> on_stop, on_term_end;
  if (term) {
    on_stop.emplace(stop, [&hook_stop] { hook_stop.Cancel(); });
    on_term_end.emplace(*term, [&hook_stop] { hook_stop.Cancel(); });
  }
  std::optional<Duration> sweep_again = SweepDepartedFinalizers(resource, *entry);

  auto record = store_.GetObject(uid);
  auto progress = store_.ListHandlers(uid);
  if (!record.ok() || !progress.ok()) {
    const Status& st = !record.ok() ? record.status() : progress.status();
    Log(LogLevel::kError, "state store read failed",
        {{"resource", resource.ref.Id()}, {"uid", uid}, {"error", st.ToString()},
         {"next", "retry in " + Seconds(options_.store_retry)}});
    return options_.store_retry;
  }
  if (entry->handled_meta) {
    // Its bytes were dropped once handled: the diffbase, of the same essence, stands in.
    if (!*record) {
      Log(LogLevel::kError, "object bytes missing",
          {{"resource", resource.ref.Id()}, {"object", entry->handled_meta->Key()}, {"uid", uid},
           {"error", "no diffbase stands in for the dropped bytes"}, {"next", "wait for the next change"}});
      return std::nullopt;
    }
    entry->object = std::make_shared<const KubeObject>(KubeObject{*entry->handled_meta, (*record)->last_object});
  }
  std::optional<Plan> plan = Decide(resource, *entry, *record, *progress);
  if (!plan) {
    if (entry->gone) cache.EraseIfGone(uid);
    if (*record && entry->object && !entry->gone) DropBytes(resource, cache, entry->object->meta);
    // Our finalizer on an object this node has no memory of (state lost): nothing to clean up,
    // but the finalizer must not block the deletion.
    if (resource.finalizer && finalizers_ && entry->object && entry->object->meta.deleting && !entry->gone &&
        !finalizers_->Release(resource, *entry->object).ok()) {
      return kFinalizerRetry;
    }
    return sweep_again;
  }
  // This handler's stored progress comes from the list read above, not from another read.
  std::optional<HandlerRecord> previous;
  for (const HandlerRecord& p : *progress) {
    if (p.handler == plan->reason) previous = p;
  }
  return Earliest(sweep_again, Execute(resource, cache, *plan, previous, term ? hook_stop : stop));
}

std::optional<Duration> Reconciler::SweepDepartedFinalizers(const WatchedResource& resource, const CachedObject& entry) {
  if (!resource.finalizer || !finalizers_ || !entry.object || !entry.object->meta.deleting || entry.gone) {
    return std::nullopt;
  }
  if (finalizers_->SweepDeparted(resource, *entry.object).ok()) return std::nullopt;
  return kFinalizerRetry;
}

std::optional<Reconciler::Plan> Reconciler::Decide(const WatchedResource& resource, const CachedObject& entry,
                                                   const std::optional<ObjectRecord>& record,
                                                   const std::vector<HandlerRecord>& progress) {
  const KubeObject* object = entry.object.get();
  const bool has_progress = !progress.empty();
  Plan plan;
  // Without the object itself (a tombstone from the store), the last state this node knew: the
  // diffbase, or else what an unfinished handler last saw (its hook was running at a crash).
  std::string remembered = record ? record->last_object : "";
  if (object) {
    plan.meta = object->meta;
  } else if (record) {
    plan.meta.uid = record->uid;
    plan.meta.namespace_name = record->namespace_name;
    plan.meta.name = record->name;
  } else if (has_progress) {
    plan.meta.uid = progress.front().uid;
    plan.meta.namespace_name = progress.front().namespace_name;
    plan.meta.name = progress.front().name;
    for (const auto& p : progress) {
      if (!p.last_object.empty()) remembered = p.last_object;
    }
  } else {
    return std::nullopt;
  }

  // An object that does not target this node is, for this node, as good as deleted.
  bool targeted = !object || !targeting_ || targeting_->Matches(resource, *object);
  if (entry.gone || object->meta.deleting || !targeted) {
    // Only what this node handled (or started handling) needs a delete here; for a singleton
    // resource, also what another leader handled.
    bool leader_handled = resource.singleton && object && !SingletonHandledDigest(object->json).empty();
    if (!record && !has_progress && !leader_handled) return std::nullopt;
    plan.reason = kReasonDelete;
    plan.old_object = object ? object->json : remembered;
    plan.old_essence = record ? record->essence : "";
    plan.target = kDeletedTarget;
    if (resource.finalizer && object && !entry.gone) {
      // A change to the object during a multi-step deletion runs the delete hook again.
      auto essence = ComputeEssence(object->json, resource.ignored_paths);
      if (essence.ok()) plan.target = EssenceDigest(*essence);
      plan.live_object = entry.object;
    }
    return plan;
  }

  auto essence = ComputeEssence(object->json, resource.ignored_paths);
  if (!essence.ok()) {
    Log(LogLevel::kError, "object unreadable",
        {{"resource", resource.ref.Id()}, {"object", plan.meta.Key()}, {"uid", plan.meta.uid},
         {"error", essence.status().ToString()}, {"next", "wait for the next change"}});
    return std::nullopt;
  }
  plan.new_object = object->json;
  plan.live_object = entry.object;
  plan.new_essence = *essence;
  plan.target = EssenceDigest(*essence);
  if (resource.singleton && (!record || record->essence != *essence) &&
      SingletonHandledDigest(object->json) == plan.target) {
    plan.reason = kReasonAdopt;  // the leader before this one handled exactly this state
    return plan;
  }
  if (!record) {
    plan.reason = TakeAdoption(plan.meta.uid) ? kReasonAdopt : kReasonCreate;
    return plan;
  }
  plan.old_object = record->last_object;
  plan.old_essence = record->essence;
  if (record->essence != *essence) {
    plan.reason = kReasonUpdate;
    return plan;
  }
  if (FirstSight(plan.meta.uid) && resource.hooks.count(kReasonResume)) {
    plan.reason = kReasonResume;
    return plan;
  }
  MarkSeen(plan.meta.uid);
  return std::nullopt;
}

std::optional<Duration> Reconciler::Execute(const WatchedResource& resource, ObjectCache& cache, const Plan& plan,
                                            const std::optional<HandlerRecord>& previous, const CancelToken& stop) {
  const std::string& uid = plan.meta.uid;
  const std::string resource_id = resource.ref.Id();
  TimePoint now = clock_.Now();

  if (plan.reason == kReasonDelete && previous && previous->last_outcome == kFinalizerPending) {
    return FinishDeleteWithFinalizer(resource, plan, cache, *previous, "delete hook succeeded earlier", false, 0);
  }
  HandlerRecord progress;
  progress.uid = uid;
  progress.handler = plan.reason;
  progress.resource = resource_id;
  progress.namespace_name = plan.meta.namespace_name;
  progress.name = plan.meta.name;
  progress.target = plan.target;
  progress.first_start_ms = ToMillis(now);
  const int earlier_failures = previous ? previous->retries : 0;  // a success after these "recovers"
  // Progress carries over only while the handler works towards the same target: a change of
  // the object starts afresh, and is the only thing that revives a permanent failure.
  if (previous && previous->target == plan.target) {
    progress = *previous;
    if (progress.last_outcome == kPermanentFailure) return std::nullopt;
    if (FromMillis(progress.next_attempt_ms) > now) return FromMillis(progress.next_attempt_ms) - now;
  }

  if (resource.finalizer && finalizers_ && plan.live_object && plan.reason != kReasonDelete &&
      !finalizers_->Claim(resource, *plan.live_object).ok()) {
    return kFinalizerRetry;  // the watch brings the fresh object; try again with it
  }
  const bool release_finalizer = plan.reason == kReasonDelete && resource.finalizer && finalizers_ && plan.live_object;
  auto hook = resource.hooks.find(plan.reason);
  if (plan.reason == kReasonAdopt) {
    return Finish(resource, plan, cache,
                  resource.singleton ? "handled by the previous leader" : "adopted after state recovery", false);
  }
  if (hook == resource.hooks.end()) {
    return release_finalizer ? FinishDeleteWithFinalizer(resource, plan, cache, progress, "nothing to run", false, 0)
                             : Finish(resource, plan, cache, "nothing to run", false);
  }

  auto diff = DiffEssences(plan.old_essence, plan.new_essence);
  HookInput input{plan.reason, options_.node_name, resource_id, plan.meta,
                  plan.old_object, plan.new_object, diff.ok() ? *diff : "[]", progress.retries, ""};
  // Stored before the hook runs: if the agent dies meanwhile, a restart knows this node touched
  // the object (and its state), so a deletion while it was down still reaches the delete hook.
  progress.last_outcome = kRunning;
  progress.last_message = "started";
  progress.next_attempt_ms = ToMillis(now);
  progress.last_object = plan.new_object.empty() ? plan.old_object : plan.new_object;
  // Checked against the clock right before the start: a leader paused past its renew deadline
  // must not start a hook when it resumes, before it has renewed.
  if (resource.singleton && !MayStartSingleton(resource, plan.meta)) return std::nullopt;
  Status marked = store_.RecordAttempt(progress);
  Log(LogLevel::kInfo, "hook started",
      {{"object", plan.meta.Key()}, {"uid", uid}, {"handler", plan.reason},
       {"retry", progress.retries},
       {"next", marked.ok() ? "wait for the hook" : "wait for the hook (start not saved: " + marked.ToString() + ")"}});
  HookSpec spec = hook->second;
  if (resource.singleton) spec.argv.insert(spec.argv.begin(), singleton_fence_.begin(), singleton_fence_.end());
  HookOutcome outcome = RunHook(runner_, spec, input, scratch_, stop);
  // A singleton hook that failed after the term ended was most likely stopped for it (by the
  // agent, or by the fence while the agent was paused): not the hook's failure, no retry counted.
  if (resource.singleton && outcome.verdict != HookVerdict::kDone &&
      (stop.cancelled() || !leadership_ || !leadership_->TermIfMayStart())) {
    outcome.verdict = HookVerdict::kCancelled;
  }
  switch (outcome.verdict) {
    case HookVerdict::kDone:
      hook_metrics_.Ran(resource_id, plan.reason, outcome, false);
      if (release_finalizer) {
        return FinishDeleteWithFinalizer(resource, plan, cache, progress, outcome.LogMessage(), true, earlier_failures);
      }
      if (resource.singleton && plan.reason != kReasonDelete) RecordSingletonHandled(resource, plan);
      return Finish(resource, plan, cache, outcome.LogMessage(), true, earlier_failures);
    case HookVerdict::kCancelled:
      return Interrupted(plan, progress, resource.singleton);
    default: {
      auto again = Postpone(resource, plan, hook->second, outcome, progress);
      hook_metrics_.Ran(resource_id, plan.reason, outcome, !again);  // only a permanent failure never comes back
      return again;
    }
  }
}

std::optional<Duration> Reconciler::KeepGoneSingleton(ObjectCache& cache, const std::string& uid) {
  TimePoint now = clock_.Now();
  TimePoint forget_at;
  {
    std::lock_guard<std::mutex> lock(mu_);
    forget_at = singleton_gone_.emplace(uid, now).first->second + options_.singleton_delete_window;
  }
  if (now < forget_at) return forget_at - now;
  // The leader handled it long ago (or nobody will): this agent forgets it too.
  Status forgotten = store_.Forget(uid);
  if (!forgotten.ok()) return options_.store_retry;
  cache.EraseIfGone(uid);
  std::lock_guard<std::mutex> lock(mu_);
  singleton_gone_.erase(uid);
  return std::nullopt;
}

bool Reconciler::MayStartSingleton(const WatchedResource& resource, const ObjectMeta& meta) const {
  if (leadership_ && leadership_->TermIfMayStart()) return true;
  Log(LogLevel::kInfo, "singleton hook not started",
      {{"resource", resource.ref.Id()}, {"object", meta.Key()}, {"uid", meta.uid},
       {"reason", "this agent does not hold the lease (or has not renewed it within the renew deadline)"},
       {"next", "run it if this agent leads again; else the leader runs it"}});
  return false;
}

void Reconciler::RecordSingletonHandled(const WatchedResource& resource, const Plan& plan) {
  Status st = client_ ? client_->Patch(ObjectRef{resource.ref, plan.meta.namespace_name, plan.meta.name},
                                       PatchType::kMerge, SingletonHandledPatch(plan.target))
                      : InternalError("singleton resources need a Kubernetes client");
  if (st.ok() || st.code() == StatusCode::kNotFound) return;  // gone: nothing left to remember
  Log(LogLevel::kWarn, "singleton progress not written",
      {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason},
       {"annotation", kSingletonHandledAnnotation}, {"error", st.ToString()},
       {"next", "keep it in this node's state; a later leader runs the hook again (at least once)"}});
}

std::optional<Duration> Reconciler::Interrupted(const Plan& plan, HandlerRecord progress, bool singleton) {
  // The agent is stopping, not the hook failing: due again at once, no retry counted.
  progress.last_outcome = kInterrupted;
  progress.last_message = singleton ? "stopped at agent shutdown or loss of leadership" : "stopped at agent shutdown";
  progress.next_attempt_ms = ToMillis(clock_.Now());
  Status stored = store_.RecordAttempt(progress);
  Log(LogLevel::kWarn, "hook interrupted",
      {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason},
       {"retries", progress.retries},
       {"next", stored.ok() ? "run again after restart, not counted as a retry"
                            : "run again after restart (not saved: " + stored.ToString() + ")"}});
  return std::nullopt;
}

std::optional<Duration> Reconciler::Finish(const WatchedResource& resource, const Plan& plan, ObjectCache& cache,
                                           const std::string& message, bool ran_hook, int earlier_failures) {
  const std::string& uid = plan.meta.uid;
  const std::string resource_id = resource.ref.Id();
  Status stored = plan.reason == kReasonDelete
                      ? store_.Forget(uid)
                      : store_.RecordHandled(ObjectRecord{uid, resource_id, plan.meta.namespace_name, plan.meta.name,
                                                          plan.new_essence, plan.new_object, ToMillis(clock_.Now())},
                                             plan.reason);
  if (!stored.ok()) {
    Log(LogLevel::kError, "state store write failed",
        {{"object", plan.meta.Key()}, {"uid", uid}, {"handler", plan.reason}, {"error", stored.ToString()},
         {"next", "run the hook again in " + Seconds(options_.store_retry)}});
    return options_.store_retry;
  }
  if (plan.reason == kReasonDelete) {
    cache.EraseIfGone(uid);
    Unsee(uid);
    if (resource.singleton) {
      std::lock_guard<std::mutex> lock(mu_);
      singleton_gone_.erase(uid);
    }
  } else {
    MarkSeen(uid);
    DropBytes(resource, cache, plan.meta);
  }
  if (ran_hook) {
    ReportSuccess(resource, plan, message, earlier_failures, "idle until the object changes");
  } else {
    // Adoptions and reasons without a hook only move the diffbase: say so, not "hook succeeded".
    Log(LogLevel::kInfo, "handled without a hook",
        {{"object", plan.meta.Key()}, {"uid", uid}, {"handler", plan.reason}, {"outcome", message},
         {"next", "idle until the object changes"}});
  }
  return std::nullopt;
}

void Reconciler::ReportSuccess(const WatchedResource& resource, const Plan& plan, const std::string& message,
                               int earlier_failures, const std::string& next) {
  Log(LogLevel::kInfo, "hook succeeded",
      {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason}, {"outcome", message},
       {"next", next}});
  if (events_ && resource.success_events) events_->Succeeded(resource.ref, plan.meta, plan.reason);
  if (events_ && earlier_failures > 0) events_->Recovered(resource.ref, plan.meta, plan.reason, earlier_failures);
}

std::optional<Duration> Reconciler::FinishDeleteWithFinalizer(const WatchedResource& resource, const Plan& plan,
                                                              ObjectCache& cache, HandlerRecord progress,
                                                              const std::string& message, bool ran_hook,
                                                              int earlier_failures) {
  if (progress.last_outcome != kFinalizerPending) {
    progress.last_outcome = kFinalizerPending;
    progress.last_message = "delete hook succeeded; removing this node's finalizer";
    progress.retries = 0;  // done, not failing
    progress.next_attempt_ms = ToMillis(clock_.Now());
    if (progress.last_object.empty()) progress.last_object = plan.old_object;
    Status stored = store_.RecordAttempt(progress);
    if (!stored.ok()) {
      Log(LogLevel::kError, "state store write failed",
          {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason}, {"error", stored.ToString()},
           {"next", "run the hook again in " + Seconds(options_.store_retry)}});
      return options_.store_retry;
    }
  }
  if (plan.live_object && finalizers_ && !finalizers_->Release(resource, *plan.live_object).ok()) {
    // Report the success now: the retried removal does not run (or report) the hook again.
    if (ran_hook) ReportSuccess(resource, plan, message, earlier_failures, "retry removing this node's finalizer");
    return kFinalizerRetry;
  }
  return Finish(resource, plan, cache, message, ran_hook, earlier_failures);
}

bool Reconciler::OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const {
  int limit = hook.max_retries > 0 ? hook.max_retries : options_.retry_limit;
  Duration total = hook.max_total_seconds > 0 ? Duration(int64_t{hook.max_total_seconds} * 1000) : options_.retry_total;
  return (limit > 0 && retries >= limit) || (total > Duration::zero() && clock_.Now() - first_start >= total);
}

std::optional<Duration> Reconciler::HandleEvents(const WatchedResource& resource, const HookSpec& hook,
                                                 const std::string& uid, const CancelToken& stop) {
  auto pending = store_.PendingEvents(uid);
  if (!pending.ok()) {
    Log(LogLevel::kError, "state store read failed",
        {{"uid", uid}, {"handler", kReasonEvent}, {"error", pending.status().ToString()},
         {"next", "retry in " + Seconds(options_.store_retry)}});
    return options_.store_retry;
  }
  const std::string resource_id = resource.ref.Id();
  for (const EventRecord& e : *pending) {
    TimePoint now = clock_.Now();
    if (FromMillis(e.next_attempt_ms) > now) return FromMillis(e.next_attempt_ms) - now;
    ObjectMeta meta{e.uid, e.namespace_name, e.name, "", false};
    bool deleted = e.type == "DELETED";
    HookInput input{kReasonEvent, options_.node_name, resource_id, meta, deleted ? e.object : "",
                    deleted ? "" : e.object, "[]", e.retries, e.type};
    HookOutcome outcome = RunHook(runner_, hook, input, scratch_, stop);
    if (outcome.verdict == HookVerdict::kCancelled) return std::nullopt;
    bool progressing = outcome.verdict == HookVerdict::kInProgress;
    int retries = progressing ? e.retries : e.retries + 1;
    bool permanent = !progressing && outcome.verdict != HookVerdict::kDone &&
                     OutOfRetries(hook, retries, FromMillis(e.observed_at_ms));
    hook_metrics_.Ran(resource_id, kReasonEvent, outcome, permanent);
    if (outcome.verdict == HookVerdict::kDone) {
      Status done = store_.CompleteEvent(e.seq);
      Log(LogLevel::kInfo, "hook succeeded",
          {{"object", meta.Key()}, {"uid", uid}, {"handler", kReasonEvent}, {"event", e.type},
           {"outcome", outcome.LogMessage()},
           {"next", done.ok() ? "next event" : "run again: not saved (" + done.ToString() + ")"}});
      if (!done.ok()) return options_.store_retry;
      if (events_ && e.retries > 0) events_->Recovered(resource.ref, meta, kReasonEvent, e.retries);
      continue;
    }
    if (permanent) {
      Status dropped = store_.CompleteEvent(e.seq);
      Log(LogLevel::kError, "hook failed permanently",
          {{"object", meta.Key()}, {"uid", uid}, {"handler", kReasonEvent}, {"event", e.type},
           {"message", outcome.LogMessage()}, {"retries", retries},
           {"next", dropped.ok() ? "drop this event, go on with the next" : "retry: " + dropped.ToString()}});
      if (events_) events_->PermanentFailure(resource.ref, meta, kReasonEvent, outcome.message);
      continue;
    }
    Duration delay = outcome.delay && outcome.verdict != HookVerdict::kFailed
                         ? *outcome.delay
                         : progressing ? options_.in_progress_delay : RetryDelay(retries);
    Status stored = store_.RecordEventAttempt(e.seq, retries, ToMillis(now + delay), outcome.message);
    if (events_ && !progressing) events_->Failing(resource.ref, meta, kReasonEvent, retries, outcome.message);
    Log(progressing ? LogLevel::kInfo : LogLevel::kWarn, progressing ? "hook in progress" : "hook failed",
        {{"object", meta.Key()}, {"uid", uid}, {"handler", kReasonEvent}, {"event", e.type},
         {"outcome", HookVerdictName(outcome.verdict)}, {"message", outcome.LogMessage()},
         {"retries", retries},
         {"next", "retry this event in " + Seconds(delay) + (stored.ok() ? "" : " (not saved: " + stored.ToString() + ")")}});
    return delay;
  }
  return std::nullopt;
}

std::optional<Duration> Reconciler::Postpone(const WatchedResource& resource, const Plan& plan, const HookSpec& hook,
                                             const HookOutcome& outcome, HandlerRecord progress) {
  TimePoint now = clock_.Now();
  progress.last_outcome = HookVerdictName(outcome.verdict);
  progress.last_message = outcome.message;
  Duration delay;
  LogLevel level = LogLevel::kWarn;
  std::string event = "hook failed";
  if (outcome.verdict == HookVerdict::kInProgress) {
    // Multi-step work, not an error: no retry is counted.
    delay = outcome.delay.value_or(options_.in_progress_delay);
    level = LogLevel::kInfo;
    event = "hook in progress";
  } else {
    progress.retries += 1;
    delay = outcome.delay && outcome.verdict == HookVerdict::kRetryLater ? *outcome.delay
                                                                         : RetryDelay(progress.retries);
    if (outcome.verdict == HookVerdict::kRetryLater) event = "hook asked to retry later";
    if (OutOfRetries(hook, progress.retries, FromMillis(progress.first_start_ms))) {
      progress.last_outcome = kPermanentFailure;
      progress.next_attempt_ms = 0;
      Status stored = store_.RecordAttempt(progress);
      Log(LogLevel::kError, "hook failed permanently",
          {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason},
           {"message", outcome.LogMessage()}, {"retries", progress.retries},
           {"next", stored.ok() ? "wait for the object to change"
                                : "wait for the object to change (not saved: " + stored.ToString() + ")"}});
      if (events_) events_->PermanentFailure(resource.ref, plan.meta, plan.reason, outcome.message);
      return std::nullopt;
    }
  }
  progress.next_attempt_ms = ToMillis(now + delay);
  Status stored = store_.RecordAttempt(progress);
  if (events_ && outcome.verdict != HookVerdict::kInProgress) {
    events_->Failing(resource.ref, plan.meta, plan.reason, progress.retries, outcome.message);
  }
  std::string next = outcome.verdict == HookVerdict::kInProgress
                         ? "run again in " + Seconds(delay) + " or on the next change"
                         : "retry in " + Seconds(delay);
  if (!stored.ok()) next += " (progress not saved: " + stored.ToString() + ")";
  Log(level, event,
      {{"object", plan.meta.Key()}, {"uid", plan.meta.uid}, {"handler", plan.reason},
       {"outcome", progress.last_outcome}, {"message", outcome.LogMessage()},
       {"retries", progress.retries}, {"next", next}});
  return delay;
}

}  // namespace nodehook
