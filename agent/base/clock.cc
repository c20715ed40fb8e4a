#include "agent/base/clock.h"

namespace nodehook {

TimePoint SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

bool SystemClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            TimePoint deadline, const std::function<bool()>& pred) {
  return cv.wait_until(lock, deadline, pred);
}

Clock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace nodehook
