// LogLimiter: lets one line through per interval and counts the ones it held back, so a
// condition that repeats on every retry (rejected credentials, an unreadable CA file) is
// reported clearly without flooding the log. Thread-safe. `clock` must outlive the limiter.
#pragma once

#include <chrono>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"

namespace nodehook {

class LogLimiter {
 public:
  explicit LogLimiter(Clock& clock, Duration interval = std::chrono::minutes(1))
      : clock_(clock), interval_(interval) {}

  // True when a line may be written now. *suppressed receives the number of lines held back
  // since the last one let through (to be logged with it).
  bool Allow(int* suppressed) {
    MutexLock lock(&mu_);
    TimePoint now = clock_.Now();
    if (has_logged_ && now - last_ < interval_) {
      ++held_back_;
      return false;
    }
    has_logged_ = true;
    last_ = now;
    *suppressed = held_back_;
    held_back_ = 0;
    return true;
  }

 private:
  Clock& clock_;
  const Duration interval_;
  Mutex mu_;
  bool has_logged_ GUARDED_BY(mu_) = false;
  TimePoint last_ GUARDED_BY(mu_);
  int held_back_ GUARDED_BY(mu_) = 0;
};

}  // namespace nodehook
