// GatedRunner: an ActionRunner whose hooks run until the test releases them or the agent
// cancels them, like a slow hook that honours SIGTERM. Records every request and how each run
// ended. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "agent/process/action_runner.h"
#include "test/fakes/call_log.h"

namespace nodehook {

class GatedRunner final : public ActionRunner {
 public:
  // Lets every running hook, and every later one, exit 0.
  void ReleaseAll() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

  ActionResult Run(const ActionRequest& request, const CancelToken& cancel) override {
    starts_.Record(request);
    CancelRegistration wake(cancel, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return released_ || cancel.cancelled(); });
    // A stop wins over a release that came after it: the hook was already told to stop.
    const bool stopped = cancel.cancelled();
    ActionResult result;
    result.kind = stopped ? ActionResult::Kind::kCancelled : ActionResult::Kind::kExited;
    result.exit_code = stopped ? -1 : 0;
    result.message = stopped ? "cancelled" : "exited 0";
    cancelled_ += stopped ? 1 : 0;
    return result;
  }

  // Blocks until `count` hooks have started; false when `timeout` passes first.
  bool WaitForStarts(size_t count, std::chrono::milliseconds timeout) {
    return starts_.WaitFor([&](const std::vector<ActionRequest>& calls) { return calls.size() >= count; }, timeout);
  }

  std::vector<ActionRequest> calls() const { return starts_.calls(); }
  size_t cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;  // guarded by mu_
  size_t cancelled_ = 0;   // guarded by mu_
  CallLog<ActionRequest> starts_;
};

}  // namespace nodehook
