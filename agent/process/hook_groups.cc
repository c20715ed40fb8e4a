#include "agent/process/hook_groups.h"

#include <signal.h>

namespace nodehook {

void HookGroups::Add(pid_t group) {
  MutexLock lock(&mu_);
  if (killing_) {
    kill(-group, SIGKILL);
    return;
  }
  groups_.insert(group);
}

void HookGroups::Remove(pid_t group) {
  MutexLock lock(&mu_);
  groups_.erase(group);
}

void HookGroups::KillAll() {
  MutexLock lock(&mu_);
  killing_ = true;
  for (pid_t group : groups_) kill(-group, SIGKILL);
}

}  // namespace nodehook
