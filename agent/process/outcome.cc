#include "agent/process/outcome.h"

#include <sys/wait.h>

namespace nodehook {

std::string FormatDuration(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

ActionResult DescribeOutcome(StopReason reason, std::optional<int> wait_status, std::chrono::milliseconds timeout) {
  ActionResult result;
  // Exit code and signal are filled whenever known, even when we stopped the hook: useful in logs.
  if (wait_status && WIFEXITED(*wait_status)) result.exit_code = WEXITSTATUS(*wait_status);
  if (wait_status && WIFSIGNALED(*wait_status)) result.signal = WTERMSIG(*wait_status);

  switch (reason) {
    case StopReason::kTimeout:
      result.kind = ActionResult::Kind::kTimedOut;
      result.message = "timed out after " + FormatDuration(timeout);
      return result;
    case StopReason::kCancel:
      result.kind = ActionResult::Kind::kCancelled;
      result.message = "cancelled";
      return result;
    case StopReason::kNone:
      break;
  }
  if (wait_status && WIFEXITED(*wait_status)) {
    result.kind = ActionResult::Kind::kExited;
    result.message = "exited " + std::to_string(result.exit_code);
  } else if (wait_status && WIFSIGNALED(*wait_status)) {
    result.kind = ActionResult::Kind::kSignaled;
    result.message = "killed by signal " + std::to_string(result.signal);
  } else {
    // The hook ran but its status is unknown: report an abnormal end (signal 0) so it counts as failed.
    result.kind = ActionResult::Kind::kSignaled;
    result.message = "exit status lost (was SIGCHLD ignored?)";
  }
  return result;
}

ActionResult FailedToStart(std::string message) {
  ActionResult result;
  result.kind = ActionResult::Kind::kFailedToStart;
  result.message = std::move(message);
  return result;
}

ActionResult CancelledBeforeStart() {
  ActionResult result;
  result.kind = ActionResult::Kind::kCancelled;
  result.message = "cancelled before start";
  return result;
}

}  // namespace nodehook
