// ActionRunner: runs one hook program on this node and reports how it ended.
// The real runner (process_runner.cc) forks and execs argv directly (never through a shell),
// in its own process group so a timeout kills the hook and everything it started.
// Implementations are thread-safe: several workers run hooks concurrently.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/cancel.h"

namespace nodehook {

struct ActionRequest {
  std::vector<std::string> argv;                             // argv[0] is a path or a name looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;      // added to (and overriding) the agent's environment
  std::string stdin_data;                                    // written to the hook's stdin, then closed
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

struct ActionResult {
  enum class Kind {
    kExited,         // exit_code is valid
    kSignaled,       // killed by a signal it did not get from us; signal is valid
    kTimedOut,       // we killed the process group after `timeout`
    kCancelled,      // we killed it because the agent is stopping
    kFailedToStart,  // fork/exec failed; message says why
  };
  Kind kind = Kind::kFailedToStart;
  int exit_code = -1;
  int signal = 0;
  std::string output;   // the tail of combined stdout+stderr (bounded), for logs and state
  std::string message;  // human-readable summary: "exited 3", "killed by signal 9", "timed out after 30s", "exec /x: No such file…"
  std::chrono::milliseconds duration{0};
};

class ActionRunner {
 public:
  virtual ~ActionRunner() = default;
  virtual ActionResult Run(const ActionRequest& request, const CancelToken& cancel) = 0;
};

}  // namespace nodehook
