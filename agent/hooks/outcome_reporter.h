// OutcomeReporter: the one place that tells how a hook run ended, for every lane (create,
// update, delete and resume; raw watch-event hooks; periodic checks; node snapshots):
//   the log line        one per run; the event names are each lane's (LaneWords), stable;
//   the metrics         nodehook_hook_runs_total and _duration_seconds (hook_metrics.h);
//   the Kubernetes Event  Failing on each failure (the recorder decides which become Events),
//                       PermanentFailure when the lane gives up, Recovered after failures,
//                       Succeeded when the resource asks for success Events.
// "In progress" is multi-step work, not an error: info, no Failing, no retry counted.
// Thread-safe: borrows a thread-safe metrics registry and EventRecorder, which must outlive it.
#pragma once

#include <string>
#include <vector>

#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/events/event_recorder.h"
#include "agent/hooks/hook_metrics.h"
#include "agent/hooks/hook_outcome.h"
#include "agent/hooks/retry_policy.h"

namespace nodehook {

// The log events of one lane: names people alert on (docs), never changed lightly.
struct LaneWords {
  const char* succeeded;
  const char* failed;
  const char* retry_later;
  const char* in_progress;
  const char* gave_up;
  LogLevel success_level;  // a success after failures is always at least info
};
inline constexpr LaneWords kHookWords{"hook succeeded", "hook failed", "hook asked to retry later",
                                      "hook in progress", "hook failed permanently", LogLevel::kInfo};
inline constexpr LaneWords kCheckWords{"check succeeded", "check failed", "check failed", "check in progress",
                                       "check failed permanently", LogLevel::kDebug};
inline constexpr LaneWords kSnapshotWords{"snapshot hook succeeded", "snapshot hook failed",
                                          "snapshot hook failed", "snapshot hook in progress",
                                          "snapshot hook failed permanently", LogLevel::kInfo};

// What a run was about.
struct ReportSubject {
  ResourceRef event_resource;  // the Event's object: the handled object, or the Node
  ObjectMeta event_object;
  std::string event_handler;   // the handler as Events name it
  std::string resource_id;     // metric labels
  std::string handler;
  std::vector<LogField> identity;  // the log line's leading fields (object, uid, handler, ...)
  bool success_events = false;     // the resource asks for Normal Events on success
};

class OutcomeReporter {
 public:
  OutcomeReporter(Metrics* metrics, EventRecorder& events) : registry_(metrics), metrics_(metrics), events_(events) {}

  // What it reports to, for reports about objects that are not hook outcomes (may be null).
  Metrics* registry() const { return registry_; }
  EventRecorder& events() const { return events_; }

  // The run finished: `tail` follows the identity in the log line (the outcome, what next).
  void Succeeded(const ReportSubject& subject, const LaneWords& words, const HookOutcome& outcome,
                 int earlier_failures, std::vector<LogField> tail);
  // The run did not finish (neither done nor cancelled); `after` is what the retry policy made
  // of it; `next` says what happens now.
  void Unfinished(const ReportSubject& subject, const LaneWords& words, const HookOutcome& outcome,
                  const NextAttempt& after, const std::string& next);

 private:
  Metrics* const registry_;
  HookMetrics metrics_;
  EventRecorder& events_;
};

}  // namespace nodehook
