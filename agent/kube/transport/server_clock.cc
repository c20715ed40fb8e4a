#include "agent/kube/transport/server_clock.h"

#include <chrono>

namespace nodehook {
namespace {

int64_t LocalMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int64_t DateHeaderClock::NowMs() const { return LocalMs() + offset_ms(); }

DateHeaderClock& ApiServerClock() {
  static DateHeaderClock clock;
  return clock;
}

}  // namespace nodehook
