// GatedRunner: an ActionRunner whose hooks run until the test releases them or the agent
// cancels them, like a slow hook that honours SIGTERM. Records every request and how each run
// ended. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "agent/actions/action_runner.h"

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
    CancelRegistration wake(cancel, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back(request);
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_ || cancel.cancelled(); });
    ActionResult result;
    result.kind = released_ ? ActionResult::Kind::kExited : ActionResult::Kind::kCancelled;
    result.exit_code = released_ ? 0 : -1;
    result.message = released_ ? "exited 0" : "cancelled";
    cancelled_ += released_ ? 0 : 1;
    return result;
  }

  // Blocks until `count` hooks have started; false when `timeout` passes first.
  bool WaitForStarts(size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return calls_.size() >= count; });
  }

  std::vector<ActionRequest> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  size_t cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ActionRequest> calls_;  // guarded by mu_
  bool released_ = false;             // guarded by mu_
  size_t cancelled_ = 0;              // guarded by mu_
};

}  // namespace nodehook
