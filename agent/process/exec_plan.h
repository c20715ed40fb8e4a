// ExecPlan: everything a hook's child process needs, computed in the parent before fork.
// After fork in a multi-threaded program the child may only call async-signal-safe functions,
// so the environment merge and the PATH search (what execvp would do) happen here instead.
// BaseEnvironment is immutable once built and thread-safe; ExecPlan is a value.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/process/action_runner.h"

namespace nodehook {

// The environment every hook inherits, read once: the agent never changes its own environment
// after it starts, and merging a pod's environment (often hundreds of service variables) anew for
// every hook was a twentieth of the agent's CPU per change.
class BaseEnvironment {
 public:
  // `env` is a null-terminated "KEY=VALUE" array (normally `environ`). Of a repeated key only the
  // first entry is kept: that is the one getenv() sees, and so does the hook.
  explicit BaseEnvironment(const char* const* env);
  BaseEnvironment(const BaseEnvironment&) = delete;
  BaseEnvironment& operator=(const BaseEnvironment&) = delete;

  // execve's envp: the entries with each of `overrides` ("KEY=VALUE") replacing its key's entry in
  // place or appended, the last of a repeated key winning; null-terminated. The pointers are into
  // this object and `overrides`, which must outlive them.
  std::vector<char*> Envp(const std::vector<std::string>& overrides) const;

  std::optional<std::string> Get(std::string_view key) const;

 private:
  std::vector<std::string> entries_;
  std::unordered_map<std::string_view, size_t> index_;  // key -> entries_ position; views into entries_
};

struct ExecPlan {
  std::vector<std::string> argv;                // as requested; argv[0] is what error messages name
  std::shared_ptr<const BaseEnvironment> base;  // what the hook inherits
  std::vector<std::string> env;                 // the request's "KEY=VALUE" entries, over `base`
  std::vector<std::string> candidates;          // paths to try with execve, in order

  std::vector<char*> Envp() const { return base->Envp(env); }
};

ExecPlan MakeExecPlan(const ActionRequest& request, std::shared_ptr<const BaseEnvironment> base);

// The base environment with `overrides` replacing entries of the same key (in place) or appended.
std::vector<std::string> MergeEnvironment(const char* const* base_env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides);

// execvp's search: a name containing '/' is used as is; otherwise each PATH entry is tried in
// order (an empty entry means the current directory). `path` unset means "/bin:/usr/bin".
std::vector<std::string> ProgramCandidates(std::string_view program, const std::optional<std::string>& path);

}  // namespace nodehook
