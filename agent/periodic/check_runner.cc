#include "agent/periodic/check_runner.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/periodic/check_timing.h"
#include "agent/hooks/hook_attempt.h"
#include "agent/hooks/hook_call.h"
#include "agent/periodic/live_objects.h"

namespace nodehook {
namespace {

Duration IntervalOf(const HookSpec& hook) { return std::chrono::seconds(hook.interval_seconds); }

}  // namespace

CheckRunner::CheckRunner(StateStore& store, ScheduleStore& schedule, ActionRunner& runner, RetryPolicy& policy,
                         Clock& clock, CheckRunnerOptions options)
    : store_(store),
      schedule_(schedule),
      runner_(runner),
      policy_(policy),
      clock_(clock),
      options_(std::move(options)),
      scratch_(options_.work_dir),
      targeting_(options_.targeting ? *options_.targeting : EveryNodeTargeting()),
      reporter_(options_.metrics, options_.events ? *options_.events : NoEvents()),
      outputs_(store, reporter_.events(), clock, options_.own_tolerations),
      rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

double CheckRunner::UnitRandom() {
  MutexLock lock(&mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

Duration CheckRunner::DueIn(const WatchedResource& resource, const std::string& uid, TimePoint due) {
  Status stored = schedule_.SetCheckDue(uid, resource.ref.Id(), ToMillis(due));
  if (!stored.ok()) {
    Log(LogLevel::kWarn, "check schedule not saved",
        {{"uid", uid}, {"handler", kReasonCheck}, {"error", stored.ToString()},
         {"next", "check at the time planned; a restart before then plans afresh"}});
  }
  return std::max(due - clock_.Now(), Duration::zero());
}

TimePoint CheckRunner::Schedule(const WatchedResource& resource, const std::string& uid,
                                std::optional<int64_t> stored_due_ms) {
  const HookSpec& hook = resource.hooks.at(kReasonCheck);
  TimePoint now = clock_.Now();
  if (stored_due_ms) return ResumedCheckDue(FromMillis(*stored_due_ms), now, options_.node_name, uid, IntervalOf(hook));
  TimePoint due = FirstCheckDue(now, options_.node_name, uid, IntervalOf(hook));
  DueIn(resource, uid, due);
  return due;
}

namespace {

// This run's progress record: failures carry over while the object stays the same (`target`, its
// state's digest); a change starts afresh.
HandlerRecord CheckProgress(const std::string& resource_id, const ObjectMeta& meta, const std::string& target,
                            TimePoint start, const std::optional<HandlerRecord>& previous) {
  if (previous && previous->target == target) return *previous;
  HandlerRecord progress;
  progress.uid = meta.uid;
  progress.handler = kReasonCheck;
  progress.resource = resource_id;
  progress.namespace_name = meta.namespace_name;
  progress.name = meta.name;
  progress.target = target;
  progress.first_start_ms = ToMillis(start);
  return progress;
}

}  // namespace

std::optional<Duration> CheckRunner::Run(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                         const CancelToken& stop) {
  const HookSpec& hook = resource.hooks.at(kReasonCheck);
  const std::string resource_id = resource.ref.Id();
  const TimePoint start = clock_.Now();
  auto entry = cache.Get(uid);
  if (!entry || !IsLiveHere(resource, *entry, targeting_)) {
    Status dropped = schedule_.DropCheck(uid);
    Log(LogLevel::kDebug, "check dropped",
        {{"resource", resource_id}, {"uid", uid}, {"handler", kReasonCheck}, {"error", dropped.ok() ? "" : dropped.ToString()},
         {"next", "no more checks: the object is no longer this node's"}});
    return std::nullopt;
  }
  const KubeObject& object = *entry->object;
  const ObjectFacts& facts = *entry->facts;
  auto record = store_.GetObject(uid);
  auto previous = store_.GetHandler(uid, kReasonCheck);
  if (!record.ok() || !previous.ok()) {
    const Status& st = !record.ok() ? record.status() : previous.status();
    Log(LogLevel::kError, "state store read failed",
        {{"object", object.meta.Key()}, {"uid", uid}, {"handler", kReasonCheck}, {"error", st.ToString()},
         {"next", "check again in " + SecondsText(policy_.StoreRetryDelay())}});
    return policy_.StoreRetryDelay();
  }
  if (!*record || !facts.readable.ok() || (*record)->essence != facts.essence) {
    // Not handled yet, or changed since: create/update comes first; check one interval later.
    Log(LogLevel::kDebug, "check skipped",
        {{"object", object.meta.Key()}, {"uid", uid}, {"handler", kReasonCheck},
         {"next", "wait for create/update to finish; check again in " + SecondsText(IntervalOf(hook))}});
    return DueIn(resource, uid, NextCheckDue(start, IntervalOf(hook), hook.jitter_percent, UnitRandom()));
  }

  HandlerRecord progress = CheckProgress(resource_id, object.meta, facts.digest, start, *previous);
  const bool had_progress = previous->has_value();
  const int earlier_failures = progress.retries;  // a success after these "recovers"

  HookInput input{kReasonCheck, options_.node_name, resource_id, object.meta, (*record)->last_object,
                  object.json, "[]", progress.retries, ""};
  HookOutcome outcome = RunHook(runner_, hook, input, scratch_, stop);
  if (outcome.verdict == HookVerdict::kCancelled) return std::nullopt;  // still due: runs after the restart
  Status recorded = outputs_.Record(resource, object.meta, kReasonCheck, outcome.node_outputs);
  (void)recorded;  // logged and reported by the recorder; the check's outcome stands

  ReportSubject subject = ObjectSubject(resource, object.meta, kReasonCheck);
  if (outcome.verdict == HookVerdict::kDone) {
    // Clears the check's failure row; the diffbase is written back as it was.
    Status cleared = had_progress ? store_.RecordHandled(**record, kReasonCheck) : Status::Ok();
    Duration next = DueIn(resource, uid, NextCheckDue(start, IntervalOf(hook), hook.jitter_percent, UnitRandom()));
    reporter_.Succeeded(subject, kCheckWords, outcome, earlier_failures,
                        {{"outcome", outcome.LogMessage()},
                         {"error", cleared.ok() ? "" : cleared.ToString()},
                         {"next", "check again in " + SecondsText(next)}});
    return next;
  }

  const TimePoint now = clock_.Now();
  NextAttempt after = DecideNextAttempt(policy_, hook, outcome, now, progress);
  // After giving up, a check goes back to its normal interval rather than waiting for a change.
  TimePoint due = after.permanent ? NextCheckDue(start, IntervalOf(hook), hook.jitter_percent, UnitRandom())
                                  : now + after.delay;
  Status stored = store_.RecordAttempt(progress);
  Duration next = DueIn(resource, uid, due);
  NextWords words{"stop retrying; check again at the normal interval, in " + SecondsText(next), "", ""};
  reporter_.Unfinished(subject, kCheckWords, outcome, after,
                       NextText(words, after, outcome, next) + SaveNote(stored));
  return next;
}

}  // namespace nodehook
