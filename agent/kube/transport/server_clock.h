// ServerClock: the API server's wall clock, as its responses' Date headers tell it. Fleet
// rollouts judge maintenance windows and soak times by it, so a node whose own clock is skewed
// starts neither early nor late. The offset from the local wall clock is taken from the latest
// Date seen (a Date has whole seconds: half a second is added, the midpoint of what it may mean).
// Before any response: the local wall clock. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace nodehook {

class ServerClock {
 public:
  virtual ~ServerClock() = default;
  // Milliseconds since the Unix epoch, by the API server's clock.
  virtual int64_t NowMs() const = 0;
};

class DateHeaderClock final : public ServerClock {
 public:
  // A response's Date was `server_ms`, received when the local wall clock read `local_ms`.
  void Observe(int64_t server_ms, int64_t local_ms) {
    offset_ms_.store(server_ms + 500 - local_ms, std::memory_order_relaxed);
  }
  int64_t NowMs() const override;
  int64_t offset_ms() const { return offset_ms_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> offset_ms_{0};
};

// The one clock every API response of this process updates (cpprest_transport.cc).
DateHeaderClock& ApiServerClock();

}  // namespace nodehook
