// Exponential backoff with full jitter (AWS architecture blog; client-go uses 0.8 s -> 30 s and
// resets after 2 min without failures). Jitter keeps a fleet of agents from reconnecting in step
// after an API server restart. Not thread-safe: one instance per retry loop.
#pragma once

#include <cstdint>
#include <random>

#include "agent/base/clock.h"

namespace nodehook {

struct BackoffPolicy {
  Duration initial{800};
  Duration max{30'000};
  double factor = 2.0;
  // A failure this long after the previous one starts again from `initial`.
  Duration reset_after{120'000};
};

class Backoff {
 public:
  Backoff(BackoffPolicy policy, const Clock& clock, uint64_t seed);

  // The delay before the next attempt: uniform in [0, min(max, initial * factor^n)].
  Duration Next();
  // The cap the next delay would be drawn under (for logs and tests).
  Duration CurrentCap() const;
  void Reset() { attempt_ = 0; }
  // A uniform random delay in [0, max]: spreads out waits the server dictated (Retry-After).
  Duration Jitter(Duration max);

 private:
  BackoffPolicy policy_;
  const Clock& clock_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
  TimePoint last_failure_{};
};

}  // namespace nodehook
