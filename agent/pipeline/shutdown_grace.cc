#include "agent/pipeline/shutdown_grace.h"

#include <string>

#include "agent/base/log.h"

namespace nodehook {

// The deadline is taken when the signal arrives, not when the waiting thread next wakes up.
ShutdownGrace::ShutdownGrace(Clock& clock, Duration grace, const CancelToken& stop)
    : clock_(clock), grace_(grace), on_stop_(stop, [this] {
        MutexLock lock(&mu_);
        deadline_ = clock_.Now() + grace_;
        cv_.notify_all();
      }) {}

void ShutdownGrace::Run(CancelToken& hooks) {
  const std::string grace = std::to_string(grace_.count() / 1000) + "s";
  {
    MutexLock lock(&mu_);
    mu_.Wait(cv_, [this] {
      mu_.AssertHeld();
      return deadline_.has_value() || workers_done_;
    });
    if (workers_done_) return;
    Log(LogLevel::kInfo, "stopping: waiting for running hooks",
        {{"grace", grace}, {"next", "exit once they finish; after " + grace + " SIGTERM them, then SIGKILL"}});
    if (WaitUntil(clock_, cv_, mu_, *deadline_, [this] {
          mu_.AssertHeld();
          return workers_done_;
        })) {
      return;
    }
  }
  Log(LogLevel::kWarn, "shutdown grace over",
      {{"grace", grace}, {"next", "SIGTERM the running hooks' process groups, SIGKILL after the kill delay, "
                                  "record them as interrupted to run again after restart"}});
  hooks.Cancel();
}

void ShutdownGrace::WorkersDone() {
  MutexLock lock(&mu_);
  workers_done_ = true;
  cv_.notify_all();
}

}  // namespace nodehook
