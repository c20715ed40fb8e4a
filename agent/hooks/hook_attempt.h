// HookAttempt: the bookkeeping every lane (create/update/delete/resume and verify, raw watch
// events, checks, snapshots) writes around a hook run that did not finish, in one place:
//   DecideNextAttempt  the retry policy decides (AfterUnfinishedRun, from the record's retries and
//                      first start) and the progress record takes the decision;
//   NextText           the standard "next" of the log line: "retry in 5.0s", "run again in 5.0s"
//                      for a hook in progress, or the lane's words once the policy gave up;
//   SaveNote           " (progress not saved: …)" when the record's write failed;
//   ObjectSubject      what a run about one object is reported as (Event, metric labels, log).
// What each lane does with a finished run differs too much to share (a deferred success in the
// executor, a completed event, a cleared check, a stored snapshot digest): that stays in the lanes.
// Pure functions and templates over the caller's values; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/hooks/hook_outcome.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/hooks/retry_policy.h"

namespace nodehook {

// The stored "not before" of a decision: `now` plus its delay; 0 once the policy gave up (nothing
// is due until the lane's own trigger, a change or the next interval).
int64_t NextAttemptMs(const NextAttempt& after, TimePoint now);

// Writes `after` onto a progress record: any record with retries, last_outcome, last_message and
// next_attempt_ms (HandlerRecord, SnapshotRecord). `message` is what the store keeps (the hook's).
template <typename Record>
void RecordNextAttempt(Record& progress, const NextAttempt& after, const std::string& message, TimePoint now) {
  progress.retries = after.retries;
  progress.last_outcome = after.outcome;
  progress.last_message = message;
  progress.next_attempt_ms = NextAttemptMs(after, now);
}

// The unfinished branch's rule: `outcome` (neither done nor cancelled) counted against the
// record's retries and first_start_ms, the decision written onto the record, and returned.
template <typename Record>
NextAttempt DecideNextAttempt(RetryPolicy& policy, const HookSpec& hook, const HookOutcome& outcome, TimePoint now,
                              Record& progress) {
  NextAttempt after = AfterUnfinishedRun(policy, hook, outcome, progress.retries, FromMillis(progress.first_start_ms));
  RecordNextAttempt(progress, after, outcome.message, now);
  return after;
}

// A lane's words for what happens after an unfinished run.
struct NextWords {
  std::string gave_up;         // the whole "next" once the policy gave up
  std::string retry_tail;      // after "retry in 5.0s" (a failure, a retry later)
  std::string run_again_tail;  // after "run again in 5.0s" (a hook in progress)
};

// The "next" of an unfinished run's log line; `wait` is the delay the lane really waits.
std::string NextText(const NextWords& words, const NextAttempt& after, const HookOutcome& outcome, Duration wait);

// "" when `stored` is ok, else " (<what>: <error>)", to follow a "next".
std::string SaveNote(const Status& stored, std::string_view what = "progress not saved");

// A run about one object: its Event on the object, metrics by resource and handler, and the log
// line's identity object, uid, handler (a lane appends its own fields).
ReportSubject ObjectSubject(const WatchedResource& resource, const ObjectMeta& meta, const std::string& handler);

}  // namespace nodehook
