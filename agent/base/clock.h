// Injected time. Production code asks a Clock for the time and for waits, so tests
// drive timers with a FakeClock (test/fakes/fake_clock.h) instead of sleeping.
// Implementations must be thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "agent/base/mutex.h"

namespace nodehook {

using Duration = std::chrono::milliseconds;
// Milliseconds since the Unix epoch: what the state store persists.
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Waits on `cv` (with `lock` held) until `pred` holds or `deadline` passes.
  // Returns pred(). A fake clock wakes waiters when time is advanced.
  virtual bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline, const std::function<bool()>& pred) = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                 const std::function<bool()>& pred) override;
  static Clock& Instance();
};

// Time since boot (CLOCK_MONOTONIC, the same for every process on the host), in the Clock
// interface's TimePoint: for deadlines that a wall-clock step must never move (leader election).
// Its Now() is not a date.
class MonotonicClock final : public Clock {
 public:
  TimePoint Now() const override;
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                 const std::function<bool()>& pred) override;
  static Clock& Instance();
};

// clock.WaitUntil with the held `mu` (Mutex::WaitWith); `mu` is held again when it returns.
// `pred` runs with `mu` held, which the analysis cannot see: a `pred` that reads fields guarded by
// `mu` begins with mu.AssertHeld().
bool WaitUntil(Clock& clock, std::condition_variable& cv, Mutex& mu, TimePoint deadline,
               const std::function<bool()>& pred) REQUIRES(mu);

inline int64_t ToMillis(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromMillis(int64_t ms) { return TimePoint(Duration(ms)); }

}  // namespace nodehook
