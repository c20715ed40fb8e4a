#include "agent/base/clock.h"

namespace nodehook {

TimePoint SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

bool SystemClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            TimePoint deadline, const std::function<bool()>& pred) {
  // Far deadlines ("no timer pending") would overflow the conversion to the steady clock.
  if (deadline - Now() > std::chrono::hours(24 * 365)) {
    cv.wait(lock, pred);
    return true;
  }
  return cv.wait_until(lock, deadline, pred);
}

Clock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

TimePoint MonotonicClock::Now() const {
  auto since_boot = std::chrono::steady_clock::now().time_since_epoch();
  return TimePoint(std::chrono::duration_cast<Duration>(since_boot));
}

bool MonotonicClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                               const std::function<bool()>& pred) {
  if (deadline - Now() > std::chrono::hours(24 * 365)) {
    cv.wait(lock, pred);
    return true;
  }
  auto steady_deadline = std::chrono::steady_clock::time_point(deadline.time_since_epoch());
  return cv.wait_until(lock, steady_deadline, pred);
}

Clock& MonotonicClock::Instance() {
  static MonotonicClock clock;
  return clock;
}

bool WaitUntil(Clock& clock, std::condition_variable& cv, Mutex& mu, TimePoint deadline,
               const std::function<bool()>& pred) {
  return mu.WaitWith(
      [&](std::unique_lock<std::mutex>& held) { return clock.WaitUntil(cv, held, deadline, pred); });
}

}  // namespace nodehook
