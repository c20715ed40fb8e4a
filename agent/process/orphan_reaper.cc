#include "agent/process/orphan_reaper.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/process/child_ledger.h"
#include "agent/process/spawn.h"
#include "agent/base/log.h"
#include "agent/base/thread_name.h"

namespace nodehook {
namespace {

std::string HowItEnded(const ReapedChild& child) {
  if (child.code == CLD_EXITED) return "exited " + std::to_string(child.status);
  return "killed by signal " + std::to_string(child.status);
}

// PID 1 is every orphan's reaper already; otherwise ask to be the reaper of our descendants,
// so what hooks leave behind is ours to reap, not the node's init's.
std::string BecomeReaper() {
  if (getpid() == 1) return "pid 1";
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    Log(LogLevel::kWarn, "cannot become a child subreaper",
        {{"error", ErrnoText(errno)}, {"next", "reap only the hooks' own processes; init reaps the rest"}});
    return "children only";
  }
  return "child subreaper";
}

}  // namespace

OrphanReaper::OrphanReaper(std::chrono::milliseconds period) : period_(period) {
  const std::string mode = BecomeReaper();
  // The thread blocks every signal: one it left open would be delivered to it with the default
  // action (SIGTERM would kill the agent instead of reaching the signal watcher).
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { Loop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  Log(LogLevel::kInfo, "orphan reaper started", {{"mode", mode}, {"next", "reap processes that hooks leave behind"}});
}

OrphanReaper::~OrphanReaper() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  stopping_.notify_all();
  thread_.join();
}

int OrphanReaper::reaped() const {
  MutexLock lock(&mu_);
  return reaped_;
}

void OrphanReaper::Loop() {
  NameThisThread("nh-reaper");
  MutexLock lock(&mu_);
  while (!stop_) {
    std::vector<ReapedChild> reaped;
    {
      MutexUnlock unlock(&mu_);
      reaped = ChildLedger::Instance().ReapUntracked();
    }
    reaped_ += static_cast<int>(reaped.size());
    for (const ReapedChild& child : reaped) {
      Log(LogLevel::kDebug, "orphan reaped",
          {{"pid", child.pid}, {"outcome", HowItEnded(child)}, {"next", "look again within the period"}});
    }
    mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
      return stopping_.wait_for(held, period_, [this] {
        mu_.AssertHeld();
        return stop_;
      });
    });
  }
}

}  // namespace nodehook
