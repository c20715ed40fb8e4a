// Turning how a hook process ended into an ActionResult with a one-line message:
// "exited 3", "killed by signal 9", "timed out after 5s", "cancelled". Pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "agent/process/action_runner.h"

namespace nodehook {

// Why the runner stopped the hook itself, if it did.
enum class StopReason { kNone, kTimeout, kCancel };

// `wait_status` is what waitpid reported for the hook, nullopt if it was lost
// (someone else reaped it, e.g. SIGCHLD set to SIG_IGN).
ActionResult DescribeOutcome(StopReason reason, std::optional<int> wait_status, std::chrono::milliseconds timeout);

ActionResult FailedToStart(std::string message);
ActionResult CancelledBeforeStart();

// "5s" for whole seconds, "250ms" otherwise.
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace nodehook
