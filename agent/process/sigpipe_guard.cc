#include "agent/process/sigpipe_guard.h"

#include <pthread.h>
#include <signal.h>

namespace nodehook {

void BlockSigpipeInThisThread() {
  thread_local bool blocked = false;
  if (blocked) return;
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
  blocked = true;
}

}  // namespace nodehook
