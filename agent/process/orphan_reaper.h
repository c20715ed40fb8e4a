// OrphanReaper: makes the agent safe as PID 1 (a container without an init) and as a child
// subreaper. When a hook's child outlives its parent (a daemon that double-forked), the kernel
// re-parents it to the agent; when it exits, it is reaped here instead of staying <defunct>.
// Hook leaders are left to their runner (ChildLedger), so no exit status is ever stolen.
//
// It looks every `period`, not on SIGCHLD: every hook's exit raised one, and the runner's reap
// would have had to wake it again (the exited leader hides the zombies behind it from waitid),
// two thread wake-ups per hook for orphans that are rare. An orphan's zombie now stays at most
// `period`, which holds nothing but its pid. One per process; not copyable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <thread>

#include "agent/base/mutex.h"

namespace nodehook {

class OrphanReaper {
 public:
  explicit OrphanReaper(std::chrono::milliseconds period = std::chrono::seconds(1));
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

  int reaped() const EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);

  const std::chrono::milliseconds period_;
  mutable Mutex mu_;
  std::condition_variable stopping_;
  bool stop_ GUARDED_BY(mu_) = false;
  int reaped_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace nodehook
