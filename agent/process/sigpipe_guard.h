// ScopedSigpipeBlock: while alive, a write to a pipe whose reader is gone fails with EPIPE in
// this thread instead of killing the agent with SIGPIPE. It changes only the calling thread's
// signal mask (no process-wide handler), and on destruction discards the SIGPIPE that such a
// write left pending before restoring the mask. Not shared between threads.
#pragma once

#include <signal.h>

namespace nodehook {

class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t old_mask_;
  bool was_pending_ = false;  // a SIGPIPE we did not cause is left alone
};

}  // namespace nodehook
