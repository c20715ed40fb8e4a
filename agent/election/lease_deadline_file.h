// The fence between a leader's term and the hook processes it started: a small file holding the
// CLOCK_MONOTONIC instant (milliseconds, decimal) by which singleton hooks must stop. The leader
// moves it forward on every renew and sets it to 0 when its term ends; `nodehook fence`
// (fence_command.h), which wraps every singleton hook, kills the hook when the instant passes,
// even while the agent itself is stopped (SIGSTOP) and cannot. CLOCK_MONOTONIC is the same for
// every process on the host. Writes are atomic (temporary file + rename). Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

Status WriteLeaseDeadline(const std::string& path, int64_t monotonic_ms);
// 0 (already passed) when the file is missing or unreadable: no proof of a term, no hook.
int64_t ReadLeaseDeadline(const std::string& path);

// The words put in front of a hook's argv so that it runs under `nodehook fence` (this
// executable) with `path` as its deadline: SIGTERM when it passes, SIGKILL kill_delay_ms later.
std::vector<std::string> FenceArgv(const std::string& path, int kill_delay_ms);

}  // namespace nodehook
