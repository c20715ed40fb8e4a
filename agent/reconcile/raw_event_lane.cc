#include "agent/reconcile/raw_event_lane.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/hooks/hook_attempt.h"
#include "agent/hooks/hook_call.h"

namespace nodehook {

RawEventLane::RawEventLane(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy,
                           OutcomeReporter& reporter, RawEventLaneOptions options)
    : store_(store),
      runner_(runner),
      clock_(clock),
      policy_(policy),
      reporter_(reporter),
      options_(std::move(options)),
      scratch_(options_.work_dir),
      outputs_(store, reporter.events(), clock, options_.own_tolerations) {}

std::optional<Duration> RawEventLane::Run(const WatchedResource& resource, const HookSpec& hook,
                                          const std::string& uid, const CancelToken& stop) {
  auto pending = store_.PendingEvents(uid);
  if (!pending.ok()) {
    Log(LogLevel::kError, "state store read failed",
        {{"uid", uid}, {"handler", kReasonEvent}, {"error", pending.status().ToString()},
         {"next", "retry in " + SecondsText(policy_.StoreRetryDelay())}});
    return policy_.StoreRetryDelay();
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
    // After a DELETED event the object is gone: what it published goes with it, not on the Node.
    Status recorded = deleted ? Status::Ok() : outputs_.Record(resource, meta, kReasonEvent, outcome.node_outputs);
    (void)recorded;  // logged and reported by the recorder; the hook's outcome stands
    ReportSubject subject = ObjectSubject(resource, meta, kReasonEvent);
    subject.identity.emplace_back("event", e.type);
    if (outcome.verdict == HookVerdict::kDone) {
      Status done = store_.CompleteEvent(e.seq);
      reporter_.Succeeded(subject, kHookWords, outcome, e.retries,
                          {{"outcome", outcome.LogMessage()},
                           {"next", done.ok() ? "next event" : "run again: not saved (" + done.ToString() + ")"}});
      if (!done.ok()) return policy_.StoreRetryDelay();
      continue;
    }
    NextAttempt after = AfterUnfinishedRun(policy_, hook, outcome, e.retries, FromMillis(e.observed_at_ms));
    if (after.permanent) {
      Status dropped = store_.CompleteEvent(e.seq);
      reporter_.Unfinished(subject, kHookWords, outcome, after,
                           dropped.ok() ? "drop this event, go on with the next" : "retry: " + dropped.ToString());
      continue;
    }
    Status stored = store_.RecordEventAttempt(e.seq, after.retries, NextAttemptMs(after, now), outcome.message);
    reporter_.Unfinished(subject, kHookWords, outcome, after,
                         "retry this event in " + SecondsText(after.delay) + SaveNote(stored, "not saved"));
    return after.delay;
  }
  return std::nullopt;
}

}  // namespace nodehook
