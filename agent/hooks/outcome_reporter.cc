#include "agent/hooks/outcome_reporter.h"

#include <algorithm>
#include <iterator>

namespace nodehook {

void OutcomeReporter::Succeeded(const ReportSubject& subject, const LaneWords& words, const HookOutcome& outcome,
                                int earlier_failures, std::vector<LogField> tail) {
  metrics_.Ran(subject.resource_id, subject.handler, outcome, false);
  std::vector<LogField> fields = subject.identity;
  fields.insert(fields.end(), std::make_move_iterator(tail.begin()), std::make_move_iterator(tail.end()));
  LogLevel level = earlier_failures > 0 ? std::max(words.success_level, LogLevel::kInfo) : words.success_level;
  Log(level, words.succeeded, fields);
  if (subject.success_events) events_.Succeeded(subject.event_resource, subject.event_object, subject.event_handler);
  if (earlier_failures > 0) {
    events_.Recovered(subject.event_resource, subject.event_object, subject.event_handler, earlier_failures);
  }
}

void OutcomeReporter::Unfinished(const ReportSubject& subject, const LaneWords& words, const HookOutcome& outcome,
                                 const NextAttempt& after, const std::string& next) {
  metrics_.Ran(subject.resource_id, subject.handler, outcome, after.permanent);
  const bool in_progress = outcome.verdict == HookVerdict::kInProgress;
  const char* event = after.permanent                               ? words.gave_up
                      : in_progress                                 ? words.in_progress
                      : outcome.verdict == HookVerdict::kRetryLater ? words.retry_later
                                                                    : words.failed;
  LogLevel level = after.permanent ? LogLevel::kError : in_progress ? LogLevel::kInfo : LogLevel::kWarn;
  std::vector<LogField> fields = subject.identity;
  fields.emplace_back("outcome", after.outcome);
  fields.emplace_back("message", outcome.LogMessage());
  fields.emplace_back("retries", after.retries);
  fields.emplace_back("next", next);
  Log(level, event, fields);
  if (after.permanent) {
    events_.PermanentFailure(subject.event_resource, subject.event_object, subject.event_handler, outcome.message);
  } else if (!in_progress) {
    events_.Failing(subject.event_resource, subject.event_object, subject.event_handler, after.retries,
                    outcome.message);
  }
}

}  // namespace nodehook
