// ServerClock: the API server's wall clock, as its responses' Date headers tell it. Fleet
// rollouts judge maintenance windows and soak times by it, so a node whose own clock is skewed
// starts neither early nor late. The offset from the local wall clock is the median of the last
// kDateWindow responses' offsets (a Date has whole seconds: half a second is added, the midpoint
// of what it may mean), so one odd Date (a proxy's, a cached answer's) moves nothing, while a
// real change of either clock is followed within half the window. Before any response: the
// local wall clock. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/base/mutex.h"

namespace nodehook {

class ServerClock {
 public:
  virtual ~ServerClock() = default;
  // Milliseconds since the Unix epoch, by the API server's clock.
  virtual int64_t NowMs() const = 0;
};

class DateHeaderClock final : public ServerClock {
 public:
  static constexpr size_t kDateWindow = 15;

  // A response's Date was `server_ms`, received when the local wall clock read `local_ms`.
  void Observe(int64_t server_ms, int64_t local_ms);
  int64_t NowMs() const override;
  int64_t offset_ms() const { return offset_ms_.load(std::memory_order_relaxed); }

 private:
  Mutex mu_;
  std::array<int64_t, kDateWindow> recent_ GUARDED_BY(mu_){};  // the last offsets, a ring
  size_t seen_ GUARDED_BY(mu_) = 0;  // offsets observed in all
  std::atomic<int64_t> offset_ms_{0};          // their median
};

// The one clock every API response of this process updates (cpprest_transport.cc).
DateHeaderClock& ApiServerClock();

}  // namespace nodehook
