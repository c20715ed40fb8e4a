// ExecPlan: everything a hook's child process needs, computed in the parent before fork.
// After fork in a multi-threaded program the child may only call async-signal-safe functions,
// so the environment merge and the PATH search (what execvp would do) happen here instead.
// Pure functions over values; thread-safe as long as nobody calls setenv() concurrently
// with MakeExecPlan (it reads `environ`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/process/action_runner.h"

namespace nodehook {

struct ExecPlan {
  std::vector<std::string> argv;        // as requested; argv[0] is what error messages name
  std::vector<std::string> envp;        // "KEY=VALUE" entries for execve
  std::vector<std::string> candidates;  // paths to try with execve, in order
};

// `base_env` is a null-terminated "KEY=VALUE" array (normally `environ`).
ExecPlan MakeExecPlan(const ActionRequest& request, const char* const* base_env);

// The base environment with `overrides` replacing entries of the same key (in place) or appended.
std::vector<std::string> MergeEnvironment(const char* const* base_env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides);

// execvp's search: a name containing '/' is used as is; otherwise each PATH entry is tried in
// order (an empty entry means the current directory). `path` unset means "/bin:/usr/bin".
std::vector<std::string> ProgramCandidates(std::string_view program, const std::optional<std::string>& path);

}  // namespace nodehook
