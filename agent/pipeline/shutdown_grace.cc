#include "agent/pipeline/shutdown_grace.h"

#include <string>

#include "agent/base/log.h"

namespace nodehook {

// The deadline is taken when the signal arrives, not when the waiting thread next wakes up.
ShutdownGrace::ShutdownGrace(Clock& clock, Duration grace, const CancelToken& stop)
    : clock_(clock), grace_(grace), on_stop_(stop, [this] {
        std::lock_guard<std::mutex> lock(mu_);
        deadline_ = clock_.Now() + grace_;
        cv_.notify_all();
      }) {}

void ShutdownGrace::Run(CancelToken& hooks) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return deadline_.has_value() || workers_done_; });
  if (workers_done_) return;
  const std::string grace = std::to_string(grace_.count() / 1000) + "s";
  Log(LogLevel::kInfo, "stopping: waiting for running hooks",
      {{"grace", grace}, {"next", "exit once they finish; after " + grace + " SIGTERM them, then SIGKILL"}});
  if (clock_.WaitUntil(cv_, lock, *deadline_, [this] { return workers_done_; })) return;
  lock.unlock();
  Log(LogLevel::kWarn, "shutdown grace over",
      {{"grace", grace}, {"next", "SIGTERM the running hooks' process groups, SIGKILL after the kill delay, "
                                  "record them as interrupted to run again after restart"}});
  hooks.Cancel();
}

void ShutdownGrace::WorkersDone() {
  std::lock_guard<std::mutex> lock(mu_);
  workers_done_ = true;
  cv_.notify_all();
}

}  // namespace nodehook
