// SpawnChild: starts one hook process from a prepared ExecPlan.
// The child runs in its own process group (pgid == pid) with stdin from a pipe and stdout+stderr
// into one pipe; every other descriptor is closed, signal dispositions and mask are reset.
// The child is started with clone(CLONE_VM | CLONE_VFORK), not fork(): nothing of the agent is
// copied, and the calling thread waits until the child has exec'd. Exec failures come back
// through the memory the child shares with us until then, so "no such file" is an error here
// rather than an exit code 127. The pid is tracked in ChildLedger from its start on, so an
// orphan reaper leaves it alone; whoever reaps it (RunningHook::Finish) untracks it.
// Thread-safe: only touches the calling thread's signal mask.
#pragma once

#include <sys/types.h>

#include "agent/process/exec_plan.h"
#include "agent/process/unique_fd.h"
#include "agent/base/status.h"

namespace nodehook {

struct SpawnedChild {
  pid_t pid = -1;      // also the process group id
  UniqueFd stdin_fd;   // write end of the hook's stdin; non-blocking, close-on-exec
  UniqueFd output_fd;  // read end of the hook's stdout+stderr; non-blocking, close-on-exec
};

// On failure the child (if any) is already reaped and the message says why,
// e.g. "exec /x/y: No such file or directory" or "clone: Resource temporarily unavailable".
Result<SpawnedChild> SpawnChild(const ExecPlan& plan);

// Thread-safe text of an errno value ("No such file or directory").
std::string ErrnoText(int err);

}  // namespace nodehook
