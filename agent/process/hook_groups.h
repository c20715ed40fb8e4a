// HookGroups: the process groups of the hooks running right now, so that an agent told to stop
// at once (a second SIGTERM) can SIGKILL every one of them before it exits. Without this the
// hooks' background processes would outlive the agent and overlap the rerun after a restart.
// A group is registered from just after fork until its leader is about to be reaped (the zombie
// leader keeps the group id reserved, so KillAll never hits an unrelated process).
// Thread-safe: hooks register from worker threads, KillAll runs on the signal thread.
#pragma once

#include <sys/types.h>

#include <set>

#include "agent/base/mutex.h"

namespace nodehook {

class HookGroups {
 public:
  // A group added after KillAll() is killed at once: the agent is exiting.
  void Add(pid_t group);
  void Remove(pid_t group);
  // SIGKILLs every registered group, and every group added from now on.
  void KillAll();

  // Scoped Add/Remove.
  class Registration {
   public:
    Registration(HookGroups& groups, pid_t group) : groups_(groups), group_(group) { groups_.Add(group_); }
    ~Registration() { groups_.Remove(group_); }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    HookGroups& groups_;
    pid_t group_;
  };

 private:
  Mutex mu_;
  std::set<pid_t> groups_ GUARDED_BY(mu_);
  bool killing_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
