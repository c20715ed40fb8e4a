// Hook programs on this machine: `check-config` and `run` look at each hook's argv[0] before
// anything runs, so a typo or a missing install is reported with the file and line, not found
// later as a failing hook. Stateless; thread-safe.
#pragma once

#include <string>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

// "" when `program` is a regular file that this process's user may execute; otherwise why not,
// e.g. "hook program /x does not exist".
std::string ProgramProblem(const std::string& program);

// Reports every hook whose argv[0] `check` finds a problem with, at resources[i].hooks.<reason>.argv[0]
// (and a rollout's verify hook at resources[i].rollout.verify.argv[0]).
void CheckHookPrograms(const Config& config, const ProgramCheck& check, Diagnostics& diag);

}  // namespace nodehook
