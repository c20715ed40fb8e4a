#include "agent/kube/transport/server_clock.h"

#include <algorithm>
#include <chrono>

namespace nodehook {
namespace {

int64_t LocalMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void DateHeaderClock::Observe(int64_t server_ms, int64_t local_ms) {
  MutexLock lock(&mu_);
  recent_[seen_ % kDateWindow] = server_ms + 500 - local_ms;
  ++seen_;
  const size_t count = std::min(seen_, kDateWindow);
  std::array<int64_t, kDateWindow> sorted = recent_;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(count));
  offset_ms_.store(sorted[count / 2], std::memory_order_relaxed);
}

int64_t DateHeaderClock::NowMs() const { return LocalMs() + offset_ms(); }

DateHeaderClock& ApiServerClock() {
  static DateHeaderClock clock;
  return clock;
}

}  // namespace nodehook
