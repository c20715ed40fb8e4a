#include "agent/core/backoff.h"

#include <algorithm>
#include <cmath>

namespace nodehook {

Backoff::Backoff(BackoffPolicy policy, const Clock& clock, uint64_t seed)
    : policy_(policy), clock_(clock), rng_(seed) {}

Duration Backoff::CurrentCap() const {
  double cap = static_cast<double>(policy_.initial.count()) * std::pow(policy_.factor, attempt_);
  return Duration(static_cast<int64_t>(std::min(cap, static_cast<double>(policy_.max.count()))));
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
