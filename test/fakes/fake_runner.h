// FakeRunner: an ActionRunner that runs nothing. Tests script the outcome per call and inspect
// every request it received (argv, env, stdin). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "agent/process/action_runner.h"

namespace nodehook {

class FakeRunner final : public ActionRunner {
 public:
  // Exit codes handed out in order; once they run out, every run exits 0.
  void QueueExitCodes(std::vector<int> codes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int c : codes) exit_codes_.push_back(c);
  }
  // Called during each run, with the request: lets a test observe or act mid-hook.
  void OnRun(std::function<void(const ActionRequest&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    on_run_ = std::move(hook);
  }

  ActionResult Run(const ActionRequest& request, const CancelToken&) override {
    std::function<void(const ActionRequest&)> hook;
    int code = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(request);
      cv_.notify_all();
      if (!exit_codes_.empty()) {
        code = exit_codes_.front();
        exit_codes_.pop_front();
      }
      hook = on_run_;
    }
    if (hook) hook(request);
    ActionResult result;
    result.kind = ActionResult::Kind::kExited;
    result.exit_code = code;
    result.message = "exited " + std::to_string(code);
    return result;
  }

  std::vector<ActionRequest> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  size_t call_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_.size();
  }

  // Blocks until `pred(calls)` holds; false when `timeout` passes first.
  bool WaitFor(const std::function<bool(const std::vector<ActionRequest>&)>& pred,
               std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(calls_); });
  }

  static std::string Env(const ActionRequest& r, const std::string& name) {
    for (const auto& [k, v] : r.env) {
      if (k == name) return v;
    }
    return "";
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<int> exit_codes_;
  std::vector<ActionRequest> calls_;
  std::function<void(const ActionRequest&)> on_run_;
};

}  // namespace nodehook
