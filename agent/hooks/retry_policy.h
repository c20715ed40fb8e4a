// RetryPolicy: how long a failed or unfinished hook waits before it runs again, and when a
// failure becomes permanent (client-go's rate limiters answer the same When/NumRequeues
// questions). An agent has one BackoffRetryPolicy, built from its retry knobs; every lane
// (reconcile, raw events, checks, snapshots) borrows it, so every hook backs off the same way.
// Implementations are thread-safe.
#pragma once

#include <functional>
#include <random>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/config/config.h"
#include "agent/hooks/hook_outcome.h"
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
  // How soon to run again when the state store itself failed (a full disk, say).
  virtual Duration StoreRetryDelay() const = 0;
};

struct RetryOptions {
  Duration base{1000};
  Duration max{300'000};
  double factor = 2.0;
  double jitter = 0.0;            // each delay is scaled by a random factor in [1 - j, 1 + j]
  int limit = 0;                  // failures before giving up; 0 = never (a hook may override)
  Duration total{0};              // give up this long after the first attempt; 0 = never
  Duration in_progress{10'000};   // when an "in progress" hook asks for no delay
  uint64_t seed = 0;              // jitter seed; 0 = random
  // After a failed state store write: asked each time (StoreHealth backs off while the store
  // keeps failing); unset = a fixed `store`.
  std::function<Duration()> store_backoff;
  Duration store{5000};
};

// The agent's policy: exponential backoff with jitter, limits from the hook or the defaults.
class BackoffRetryPolicy final : public RetryPolicy {
 public:
  // Borrows `clock`, which must outlive it.
  BackoffRetryPolicy(Clock& clock, RetryOptions options);

  // base * factor^(retries-1), capped, then jittered.
  Duration RetryDelay(int retries) override;
  bool OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const override;
  Duration InProgressDelay() const override { return options_.in_progress; }
  Duration StoreRetryDelay() const override { return options_.store_backoff ? options_.store_backoff() : options_.store; }

 private:
  Clock& clock_;
  const RetryOptions options_;
  Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
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
