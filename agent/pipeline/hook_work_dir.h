// Where hook input files go. Pure functions; thread-safe.
#pragma once

#include <string>

#include "agent/config/config.h"

namespace nodehook {

// When the config does not say: next to the state file.
std::string DefaultHookWorkDir(const std::string& state_file);
// tuning.hook_work_dir, else DefaultHookWorkDir.
std::string HookWorkDir(const Config& config);

}  // namespace nodehook
