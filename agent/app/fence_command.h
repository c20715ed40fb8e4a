// `nodehook fence DEADLINE_FILE KILL_DELAY_MS -- PROGRAM [ARGS...]`: runs PROGRAM as its child
// and stops it once the instant in DEADLINE_FILE (lease_deadline_file.h) has passed: SIGTERM to
// the process group, SIGKILL to it KILL_DELAY_MS later. The agent wraps every cluster-singleton
// hook in it, so a hook is stopped on time even while the agent is paused (SIGSTOP) and cannot
// stop it itself. The file is re-read whenever the instant it gave passes (the leader moves it
// forward on every renew). Exits as the program did (same code, or the same signal). Internal: not
// listed in --help.
#pragma once

namespace nodehook {

// `args` are the words after "fence". Returns the exit code (125 for a usage error, 127 when
// PROGRAM cannot be run) unless it ends the process with the program's signal.
int RunFence(int argc, char** args);

}  // namespace nodehook
