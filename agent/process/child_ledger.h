// ChildLedger: which of the agent's child processes a hook runner will reap itself. An orphan
// reaper (the agent as PID 1, or as a child subreaper, see orphan_reaper.h) reaps every other
// child that exits, and must never steal a hook leader's exit status:
//  - SpawnChild holds a spawn window (shared) from the clone until the new pid is tracked, and the
//    reaper takes the window exclusively, so it never sees a hook leader that is not tracked yet;
//  - the runner untracks a pid only after it has reaped it (counted, since a pid may be reused
//    by the next spawn before the old owner untracks it).
// Children are process-wide, hence one ledger per process (Instance()). Thread-safe.
#pragma once

#include <sys/types.h>

#include <unordered_map>
#include <vector>

#include "agent/base/mutex.h"

namespace nodehook {

struct ReapedChild {
  pid_t pid;
  int code;    // siginfo si_code: CLD_EXITED, CLD_KILLED, CLD_DUMPED
  int status;  // exit code or signal number
};

class ChildLedger {
 public:
  static ChildLedger& Instance();

  // Hold shared (ReaderMutexLock) from before the child is started until Track(pid).
  SharedMutex& spawn_window() { return spawn_window_; }
  void Track(pid_t pid);
  // After reaping `pid`.
  void Untrack(pid_t pid);
  bool IsTracked(pid_t pid) const;

  // Reaps exited children that are not tracked, without blocking. When the first zombie waitid
  // reports is a tracked hook leader, the ones behind it are reached by listing every child.
  std::vector<ReapedChild> ReapUntracked();

 private:
  SharedMutex spawn_window_;
  mutable Mutex mu_;
  std::unordered_map<pid_t, int> tracked_ GUARDED_BY(mu_);
};

}  // namespace nodehook
