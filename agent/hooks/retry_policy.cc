#include "agent/hooks/retry_policy.h"

#include <algorithm>

#include "agent/base/duration_math.h"

namespace nodehook {

BackoffRetryPolicy::BackoffRetryPolicy(Clock& clock, RetryOptions options)
    : clock_(clock), options_(std::move(options)), rng_(options_.seed != 0 ? options_.seed : std::random_device{}()) {}

Duration BackoffRetryPolicy::RetryDelay(int retries) {
  const double max = static_cast<double>(options_.max.count());
  double delay = static_cast<double>(options_.base.count());
  for (int i = 1; i < retries && delay < max; ++i) delay *= options_.factor;
  delay = std::min(delay, max);
  if (options_.jitter > 0) {
    MutexLock lock(&mu_);
    delay *= std::uniform_real_distribution<double>(1 - options_.jitter, 1 + options_.jitter)(rng_);
  }
  return SaturatingMillis(std::max(delay, 0.0));  // never negative, never an overflowing cast
}

bool BackoffRetryPolicy::OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const {
  int limit = hook.max_retries > 0 ? hook.max_retries : options_.limit;
  Duration total = hook.max_total_seconds > 0 ? Duration(int64_t{hook.max_total_seconds} * 1000) : options_.total;
  return (limit > 0 && retries >= limit) || (total > Duration::zero() && clock_.Now() - first_start >= total);
}

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
