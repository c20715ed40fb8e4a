#include "agent/hooks/hook_attempt.h"

#include "agent/base/duration_math.h"

namespace nodehook {

int64_t NextAttemptMs(const NextAttempt& after, TimePoint now) {
  return after.permanent ? 0 : ToMillis(now + after.delay);
}

std::string NextText(const NextWords& words, const NextAttempt& after, const HookOutcome& outcome, Duration wait) {
  if (after.permanent) return words.gave_up;
  // "In progress" is work under way, not a failure: it runs again rather than being retried.
  if (outcome.verdict == HookVerdict::kInProgress) return "run again in " + SecondsText(wait) + words.run_again_tail;
  return "retry in " + SecondsText(wait) + words.retry_tail;
}

std::string SaveNote(const Status& stored, std::string_view what) {
  if (stored.ok()) return "";
  return " (" + std::string(what) + ": " + stored.ToString() + ")";
}

ReportSubject ObjectSubject(const WatchedResource& resource, const ObjectMeta& meta, const std::string& handler) {
  return ReportSubject{resource.ref,
                       meta,
                       handler,
                       resource.ref.Id(),
                       handler,
                       {{"object", meta.Key()}, {"uid", meta.uid}, {"handler", handler}},
                       resource.success_events};
}

}  // namespace nodehook
