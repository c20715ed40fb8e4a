#include "agent/process/child_ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace nodehook {
namespace {

// Reaps `pid` if it has exited. Only for pids nobody else waits for.
bool ReapIfExited(pid_t pid, std::vector<ReapedChild>* reaped) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG) != 0 || info.si_pid != pid) return false;
  reaped->push_back(ReapedChild{pid, info.si_code, info.si_status});
  return true;
}

// Every child of this process, from /proc/self/task/*/children (one list per thread: a child
// belongs to the thread that started it, an adopted orphan to the thread the kernel picked).
// Runs at most once per reaper period, once per agent thread: plain open/read, no stream per file.
void AppendPids(const std::string& text, std::vector<pid_t>* pids) {
  pid_t pid = 0;
  bool in_number = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      pid = pid * 10 + (c - '0');
      in_number = true;
    } else if (in_number) {
      pids->push_back(pid);
      pid = 0;
      in_number = false;
    }
  }
  if (in_number) pids->push_back(pid);
}

std::string ReadSmallFile(int dir_fd, const std::string& path) {
  std::string text;
  int fd = openat(dir_fd, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

std::vector<pid_t> ListChildren() {
  std::vector<pid_t> children;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return children;
  while (dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    AppendPids(ReadSmallFile(dirfd(tasks), std::string(task->d_name) + "/children"), &children);
  }
  closedir(tasks);
  return children;
}

}  // namespace

ChildLedger& ChildLedger::Instance() {
  static ChildLedger* ledger = new ChildLedger();  // never destroyed: runners may outlive main's statics
  return *ledger;
}

void ChildLedger::Track(pid_t pid) {
  MutexLock lock(&mu_);
  ++tracked_[pid];
}

void ChildLedger::Untrack(pid_t pid) {
  MutexLock lock(&mu_);
  auto it = tracked_.find(pid);
  if (it != tracked_.end() && --it->second == 0) tracked_.erase(it);
}

bool ChildLedger::IsTracked(pid_t pid) const {
  MutexLock lock(&mu_);
  return tracked_.count(pid) > 0;
}

std::vector<ReapedChild> ChildLedger::ReapUntracked() {
  WriterMutexLock window(&spawn_window_);  // no fork is between fork() and Track()
  std::vector<ReapedChild> reaped;
  while (true) {
    siginfo_t info{};
    // WNOWAIT: look first; a tracked hook leader must stay a zombie until its runner reaps it.
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return reaped;
    if (IsTracked(info.si_pid)) break;
    if (!ReapIfExited(info.si_pid, &reaped)) return reaped;
  }
  // waitid reports the first zombie only, and that one is a hook leader: look past it, child by child.
  for (pid_t pid : ListChildren()) {
    if (!IsTracked(pid)) ReapIfExited(pid, &reaped);
  }
  return reaped;
}

}  // namespace nodehook
