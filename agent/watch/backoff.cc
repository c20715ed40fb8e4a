#include "agent/watch/backoff.h"

#include <algorithm>
#include <cmath>

#include "agent/base/duration_math.h"

namespace nodehook {

Backoff::Backoff(BackoffPolicy policy, const Clock& clock, uint64_t seed)
    : policy_(policy), clock_(clock), rng_(seed) {}

Duration Backoff::CurrentCap() const {
  double cap = static_cast<double>(policy_.initial.count()) * std::pow(policy_.factor, attempt_);
  return std::min(SaturatingMillis(cap), policy_.max);
}

Duration Backoff::Jitter(Duration max) {
  if (max <= Duration::zero()) return Duration::zero();
  return Duration(std::uniform_int_distribution<int64_t>(0, max.count())(rng_));
}

Duration Backoff::Next() {
  TimePoint now = clock_.Now();
  if (attempt_ > 0 && now - last_failure_ >= policy_.reset_after) attempt_ = 0;
  last_failure_ = now;
  Duration cap = CurrentCap();
  if (attempt_ < 62) ++attempt_;
  std::uniform_int_distribution<int64_t> pick(0, cap.count());
  return Duration(pick(rng_));
}

}  // namespace nodehook
