// ProcessRunner: the real ActionRunner. Forks and execs argv directly (never through a shell)
// with the agent's environment plus request.env, the request's stdin, and stdout+stderr merged
// into one bounded tail. Each hook runs in its own process group:
//  - timeout or cancellation: SIGTERM to the group, SIGKILL after `grace_period`;
//  - after the hook exits, background children get `drain_window` to close the output pipe,
//    then whatever is left of the group is SIGKILLed, so Run() never hangs on them;
//  - KillAllNow() (a second stop signal): SIGKILL to every running hook's group at once.
// Uses no signal handlers and reaps only its own pids, so Run() is safe to call from several
// threads at once. The agent must not set SIGCHLD to SIG_IGN (exit statuses would be lost).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "agent/process/action_runner.h"
#include "agent/process/exec_plan.h"
#include "agent/process/hook_groups.h"

namespace nodehook {

struct ProcessRunnerOptions {
  std::chrono::milliseconds grace_period{2000};  // between SIGTERM and SIGKILL
  std::chrono::milliseconds drain_window{500};   // how long output may stay open after the hook exited
  std::chrono::milliseconds poll_interval{50};   // how often cancellation is checked
  size_t output_limit = 16 * 1024;               // bytes of combined stdout+stderr kept (the tail)
};

class ProcessRunner final : public ActionRunner {
 public:
  // Not `= default`: clang deletes that for a class with a const member of aggregate type.
  ProcessRunner() : ProcessRunner(ProcessRunnerOptions{}) {}
  explicit ProcessRunner(ProcessRunnerOptions options);

  ActionResult Run(const ActionRequest& request, const CancelToken& cancel) override;

  // For an agent about to exit without waiting: SIGKILLs the group of every hook running now
  // or started from now on. Thread-safe, also while Run() is in progress on other threads.
  void KillAllNow() { groups_.KillAll(); }

 private:
  const ProcessRunnerOptions options_;
  // The agent's environment as it was when the runner was made: what every hook inherits.
  const std::shared_ptr<const BaseEnvironment> environment_;
  HookGroups groups_;
};

}  // namespace nodehook
