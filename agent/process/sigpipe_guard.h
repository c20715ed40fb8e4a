// BlockSigpipeInThisThread: from the first call on, a write to a pipe whose reader is gone fails
// with EPIPE in the calling thread instead of killing the agent with SIGPIPE. It changes only the
// calling thread's signal mask (no process-wide handler), once per thread: a hook run costs no
// mask change. A SIGPIPE such a write raises stays pending on the thread, blocked, and so never
// acts; hooks start with an empty mask and no pending signals (spawn.h). Thread-safe.
#pragma once

namespace nodehook {

void BlockSigpipeInThisThread();

}  // namespace nodehook
