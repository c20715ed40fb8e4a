// RunPlugin: runs a credential plugin (kubeconfig `exec`) to completion, directly with
// posix_spawnp (never through a shell), and returns its stdout and stderr separately: stdout is
// the ExecCredential, stderr is what a failure message shows. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct PluginCommand {
  std::vector<std::string> argv;                         // argv[0] is a path or a name looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // added to (and overriding) the agent's environment
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

struct PluginOutput {
  int exit_code = -1;
  std::string out;  // stdout, at most kPluginMaxStdout bytes
  std::string err;  // the last kPluginMaxStderr bytes of stderr
};

constexpr size_t kPluginMaxStdout = 1 << 20;
constexpr size_t kPluginMaxStderr = 4096;

// The plugin runs in its own process group with stdin from /dev/null, default signal handling
// and an empty signal mask (the agent blocks SIGTERM in every thread). Errors: kInvalid when it
// cannot be started ("exec aws: No such file or directory"), kTimeout when it ran longer than
// `timeout` (its group is killed), kUnavailable when it died from a signal or wrote more than
// kPluginMaxStdout. A non-zero exit is not an error here: the caller reads exit_code.
Result<PluginOutput> RunPlugin(const PluginCommand& command);

}  // namespace nodehook
