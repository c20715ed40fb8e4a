#include "agent/process/orphan_reaper.h"

#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "agent/process/child_ledger.h"
#include "agent/process/spawn.h"
#include "agent/base/log.h"

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

OrphanReaper::OrphanReaper(std::chrono::milliseconds backstop) : backstop_(backstop) {
  sigemptyset(&sigchld_);
  sigaddset(&sigchld_, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &sigchld_, nullptr);
  const std::string mode = BecomeReaper();
  // The thread blocks every signal: one it left open would be delivered to it with the default
  // action (SIGTERM would kill the agent instead of reaching the signal watcher).
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { Loop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ChildLedger::Instance().SetOnUntrack([this] { Wake(); });
  Log(LogLevel::kInfo, "orphan reaper started", {{"mode", mode}, {"next", "reap processes that hooks leave behind"}});
}

OrphanReaper::~OrphanReaper() {
  ChildLedger::Instance().SetOnUntrack(nullptr);  // after this returns, no Untrack calls Wake()
  stop_.store(true);
  Wake();
  thread_.join();
}

void OrphanReaper::Wake() { pthread_kill(thread_.native_handle(), SIGCHLD); }

void OrphanReaper::Loop() {
  pthread_setname_np(pthread_self(), "nodehook-reaper");
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(backstop_);
  const timespec backstop{static_cast<time_t>(secs.count()),
                          static_cast<long>(std::chrono::nanoseconds(backstop_ - secs).count())};
  // A SIGCHLD usually announces a hook leader, which its runner reaps and untracks (waking this
  // thread again). Every child is listed at most once per backstop, so an orphan behind leaders
  // that keep coming (hooks back to back on every worker) is still reaped within it.
  auto last_listed = std::chrono::steady_clock::now();
  while (!stop_.load()) {
    const auto now = std::chrono::steady_clock::now();
    ChildLedger::Behind behind = ChildLedger::Behind::kWait;
    if (now - last_listed >= backstop_) {
      behind = ChildLedger::Behind::kList;
      last_listed = now;
    }
    for (const ReapedChild& child : ChildLedger::Instance().ReapUntracked(behind)) {
      reaped_.fetch_add(1);
      Log(LogLevel::kDebug, "orphan reaped",
          {{"pid", child.pid}, {"outcome", HowItEnded(child)}, {"next", "wait for the next one"}});
    }
    sigtimedwait(&sigchld_, nullptr, &backstop);  // a SIGCHLD, a Wake(), or the backstop
  }
}

}  // namespace nodehook
