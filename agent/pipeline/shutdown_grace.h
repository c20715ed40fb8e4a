// ShutdownGrace: how the agent stops the hooks that are running when it is told to stop.
// Once `stop` is cancelled the workers take no new work, and running hooks get `grace` to
// finish. If the workers have not all returned by then, `hooks` is cancelled: the runner sends
// SIGTERM to each hook's process group and SIGKILL after its kill delay, and the reconciler
// records the run as interrupted, to run again after a restart.
// Time comes from the injected Clock (FakeClock in tests). Thread-safe: Run() blocks on one
// thread while stop.Cancel() and WorkersDone() come from others.
#pragma once

#include <condition_variable>
#include <optional>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"

namespace nodehook {

class ShutdownGrace {
 public:
  // The grace starts when `stop` is cancelled (at once if it already is); `stop` must outlive this.
  ShutdownGrace(Clock& clock, Duration grace, const CancelToken& stop);

  // Returns after WorkersDone(), or cancels `hooks` and returns once the grace is over.
  void Run(CancelToken& hooks);
  // Every worker has returned: nothing is left to wait for.
  void WorkersDone();

 private:
  Clock& clock_;
  const Duration grace_;
  Mutex mu_;
  std::condition_variable cv_;
  std::optional<TimePoint> deadline_ GUARDED_BY(mu_);  // set when `stop` fires
  bool workers_done_ GUARDED_BY(mu_) = false;
  CancelRegistration on_stop_;         // last: may fire at once, with every other member ready
};

}  // namespace nodehook
