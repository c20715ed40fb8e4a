#include "agent/process/process_runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "agent/process/exec_plan.h"
#include "agent/process/outcome.h"
#include "agent/process/running_hook.h"
#include "agent/process/sigpipe_guard.h"
#include "agent/process/spawn.h"
#include "agent/base/log.h"

extern char** environ;

namespace nodehook {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// Real time on purpose: these deadlines bound real processes and poll() timeouts.
SteadyTime Now() { return std::chrono::steady_clock::now(); }

// Drives one hook until it can be reaped. Returns why we stopped it, if we did.
StopReason Supervise(RunningHook& hook, const ActionRequest& request, const CancelToken& cancel,
                     const ProcessRunnerOptions& options, SteadyTime start) {
  enum class Phase {
    kRunning,      // waiting for the hook to exit, the timeout, or cancellation
    kTerminating,  // SIGTERM sent; waiting for the group to go away, up to the grace period
    kDraining,     // the hook exited; waiting for stray holders of its output, up to the drain window
  };
  Phase phase = Phase::kRunning;
  StopReason reason = StopReason::kNone;
  // Absurd timeouts mean "no timeout" rather than an overflowed deadline in the past.
  const bool unbounded = request.timeout > std::chrono::hours(24 * 365);
  const SteadyTime deadline = unbounded ? SteadyTime::max() : start + request.timeout;
  SteadyTime give_up = SteadyTime::max();
  const auto tick = std::max(options.poll_interval, std::chrono::milliseconds(1));  // never a busy loop

  while (true) {
    const SteadyTime now = Now();
    if (phase == Phase::kRunning) {
      if (hook.LeaderExited()) {
        phase = Phase::kDraining;
        give_up = now + options.drain_window;
        continue;
      }
      if (cancel.cancelled() || now >= deadline) {
        reason = cancel.cancelled() ? StopReason::kCancel : StopReason::kTimeout;
        hook.SignalGroup(SIGTERM);
        phase = Phase::kTerminating;
        give_up = now + options.grace_period;
        continue;
      }
      hook.PumpIo(std::min(now + tick, deadline));
      continue;
    }
    const bool group_gone = hook.OutputClosed() && (phase == Phase::kDraining || hook.LeaderExited());
    if (group_gone || now >= give_up) return reason;
    hook.PumpIo(std::min(now + tick, give_up));
  }
}

// argv as a shell would need it typed: arguments with blanks, quotes or nothing in them quoted.
std::string QuotedArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    if (!arg.empty() && arg.find_first_of(" \t\n'\"\\$`") == std::string::npos) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string EnvValue(const ActionRequest& request, const char* key) {
  for (const auto& [k, v] : request.env) {
    if (k == key) return v;
  }
  return "";
}

// --log-level debug: every hook spawn with its argv, naming the object from the hook's environment.
void DebugSpawned(const ActionRequest& request, pid_t pid) {
  if (!LogEnabled(LogLevel::kDebug)) return;
  std::string ns = EnvValue(request, "NODEHOOK_NAMESPACE");
  std::string name = EnvValue(request, "NODEHOOK_NAME");
  Log(LogLevel::kDebug, "hook spawned",
      {{"object", ns.empty() ? name : ns + "/" + name},
       {"uid", EnvValue(request, "NODEHOOK_UID")},
       {"handler", EnvValue(request, "NODEHOOK_REASON")},
       {"argv", QuotedArgv(request.argv)},
       {"pid", pid},
       {"timeout_ms", request.timeout.count()},
       {"next", "wait for it to exit"}});
}

}  // namespace

ProcessRunner::ProcessRunner(ProcessRunnerOptions options)
    : options_(options), environment_(std::make_shared<BaseEnvironment>(environ)) {}

ActionResult ProcessRunner::Run(const ActionRequest& request, const CancelToken& cancel) {
  const SteadyTime start = Now();
  auto finished = [start](ActionResult result) {
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Now() - start);
    return result;
  };
  if (cancel.cancelled()) return finished(CancelledBeforeStart());

  BlockSigpipeInThisThread();  // `hook` writes the stdin pipe, whose reader may be gone
  Result<SpawnedChild> child = SpawnChild(MakeExecPlan(request, environment_));
  if (!child.ok()) return finished(FailedToStart(child.status().message()));
  DebugSpawned(request, child->pid);

  const pid_t group = child->pid;
  RunningHook hook(std::move(child.value()), request.stdin_data, options_.output_limit);
  StopReason reason;
  {
    HookGroups::Registration registered(groups_, group);
    reason = Supervise(hook, request, cancel, options_, start);
    // What Finish() does first, done while registered: KillAllNow() never misses leftovers.
    hook.SignalGroup(SIGKILL);
  }
  ActionResult result = DescribeOutcome(reason, hook.Finish(), request.timeout);
  result.output = hook.TakeOutput();
  return finished(std::move(result));
}

}  // namespace nodehook
