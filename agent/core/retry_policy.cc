#include "agent/core/retry_policy.h"

namespace nodehook {

NextAttempt AfterUnfinishedRun(RetryPolicy& policy, const HookSpec& hook, const HookOutcome& outcome,
                               int retries_before, TimePoint first_start) {
  NextAttempt next;
  next.outcome = HookVerdictName(outcome.verdict);
  if (outcome.verdict == HookVerdict::kInProgress) {
    next.retries = retries_before;
    next.delay = outcome.delay.value_or(policy.InProgressDelay());
    return next;
  }
  next.retries = retries_before + 1;
  next.delay = outcome.delay && outcome.verdict == HookVerdict::kRetryLater ? *outcome.delay
                                                                            : policy.RetryDelay(next.retries);
  if (policy.OutOfRetries(hook, next.retries, first_start)) {
    next.permanent = true;
    next.outcome = kOutcomePermanentFailure;
  }
  return next;
}

}  // namespace nodehook
