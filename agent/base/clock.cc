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

}  // namespace nodehook
