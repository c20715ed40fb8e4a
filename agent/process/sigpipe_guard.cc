#include "agent/process/sigpipe_guard.h"

#include <pthread.h>
#include <time.h>

namespace nodehook {
namespace {

sigset_t SigpipeOnly() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

bool SigpipePending() {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  return sigismember(&pending, SIGPIPE) == 1;
}

}  // namespace

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  const sigset_t pipe_set = SigpipeOnly();
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask_);
  was_pending_ = SigpipePending();
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  if (!was_pending_) {
    const sigset_t pipe_set = SigpipeOnly();
    const timespec no_wait{0, 0};
    while (SigpipePending() && sigtimedwait(&pipe_set, nullptr, &no_wait) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace nodehook
