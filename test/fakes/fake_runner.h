// FakeRunner: an ActionRunner that runs nothing. Tests script the outcome per call and inspect
// every request it received (argv, env, stdin). Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "agent/process/action_runner.h"
#include "test/fakes/call_log.h"

namespace nodehook {

class FakeRunner final : public ActionRunner {
 public:
  // Exit codes handed out in order; once they run out, every run exits 0.
  void QueueExitCodes(std::vector<int> codes) {
    for (int c : codes) runs_.Queue(c);
  }
  // Called during each run, with the request: lets a test observe or act mid-hook.
  void OnRun(std::function<void(const ActionRequest&)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    on_run_ = std::move(hook);
  }

  ActionResult Run(const ActionRequest& request, const CancelToken&) override {
    const int code = runs_.Take(request);
    std::function<void(const ActionRequest&)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = on_run_;
    }
    if (hook) hook(request);
    ActionResult result;
    result.kind = ActionResult::Kind::kExited;
    result.exit_code = code;
    result.message = "exited " + std::to_string(code);
    return result;
  }

  std::vector<ActionRequest> calls() const { return runs_.calls(); }
  size_t call_count() const { return runs_.count(); }

  // Blocks until `pred(calls)` holds; false when `timeout` passes first.
  bool WaitFor(const std::function<bool(const std::vector<ActionRequest>&)>& pred,
               std::chrono::milliseconds timeout) const {
    return runs_.WaitFor(pred, timeout);
  }

  static std::string Env(const ActionRequest& r, const std::string& name) {
    for (const auto& [k, v] : r.env) {
      if (k == name) return v;
    }
    return "";
  }

 private:
  CallLog<ActionRequest, int> runs_;  // answered with the queued exit codes
  mutable std::mutex mu_;
  std::function<void(const ActionRequest&)> on_run_;  // guarded by mu_
};

}  // namespace nodehook
