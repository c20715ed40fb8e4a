// OrphanReaper: makes the agent safe as PID 1 (a container without an init) and as a child
// subreaper. When a hook's child outlives its parent (a daemon that double-forked), the kernel
// re-parents it to the agent; when it exits, it is reaped here instead of staying <defunct>.
// Hook leaders are left to their runner (ChildLedger), so no exit status is ever stolen.
//
// The constructor blocks SIGCHLD in the calling thread and starts a thread that waits for it,
// so construct the reaper first thing, before any other thread starts (threads inherit the
// mask; a thread that does not block SIGCHLD may swallow the wake-up, then a periodic look
// still reaps within `backstop`). One per process; not copyable.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace nodehook {

class OrphanReaper {
 public:
  explicit OrphanReaper(std::chrono::milliseconds backstop = std::chrono::seconds(1));
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

  int reaped() const { return reaped_.load(); }

 private:
  void Loop();
  void Wake();

  const std::chrono::milliseconds backstop_;
  sigset_t sigchld_;
  std::atomic<bool> stop_{false};
  std::atomic<int> reaped_{0};
  std::thread thread_;
};

}  // namespace nodehook
