// FixedServerClock: the API server's clock at `now_ms`, which moves only when a test sets it.
// Not thread-safe: set it while nothing reads it.
#pragma once

#include <cstdint>

#include "agent/kube/transport/server_clock.h"

namespace nodehook {

class FixedServerClock final : public ServerClock {
 public:
  explicit FixedServerClock(int64_t start_ms = 1000) : now_ms(start_ms) {}
  int64_t NowMs() const override { return now_ms; }
  int64_t now_ms;
};

}  // namespace nodehook
