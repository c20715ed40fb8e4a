// RetryPolicy: how long a failed or unfinished hook waits before it runs again, and when a
// failure becomes permanent. The Reconciler owns the one policy of an agent (its retry knobs and
// jitter); the check and snapshot runners borrow it, so every hook backs off the same way.
// Implementations are thread-safe.
#pragma once

#include <string>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/core/hook_outcome.h"
#include "storage/state_store.h"

namespace nodehook {

class RetryPolicy {
 public:
  virtual ~RetryPolicy() = default;
  // The delay before retry number `retries` (1-based).
  virtual Duration RetryDelay(int retries) = 0;
  // Whether a failure after `retries` retries since `first_start` exhausted the hook's limits.
  virtual bool OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const = 0;
  // When an "in progress" hook asks for no delay.
  virtual Duration InProgressDelay() const = 0;
};


// What a run that did not finish means for its handler: the stored outcome, the failed attempts
// counted so far, when to run again, and whether it gave up.
struct NextAttempt {
  std::string outcome;  // "in_progress", "retry_later", "failed" or "permanent_failure"
  int retries = 0;
  Duration delay{0};    // meaningless when permanent
  bool permanent = false;
};

// `outcome` is not done and not cancelled. "In progress" counts no retry and waits the delay the
// hook asked for (else the policy's default); a failure counts one and waits the delay a "retry
// later" asked for, else the policy's backoff, unless the hook's limits are exhausted.
NextAttempt AfterUnfinishedRun(RetryPolicy& policy, const HookSpec& hook, const HookOutcome& outcome,
                               int retries_before, TimePoint first_start);

}  // namespace nodehook
