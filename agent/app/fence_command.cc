#include "agent/app/fence_command.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "agent/election/lease_deadline_file.h"

namespace nodehook {
namespace {

int64_t MonotonicMillis() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1'000'000;
}

// Waits up to `timeout_ms` for the child to exit; true (and `*status`) when it did.
bool WaitForExit(int pidfd, pid_t child, int64_t timeout_ms, int* status) {
  pollfd p{pidfd, POLLIN, 0};
  int timeout = static_cast<int>(std::min<int64_t>(std::max<int64_t>(timeout_ms, 0), 1 << 30));
  int ready = poll(&p, 1, timeout);
  if (ready < 0 && errno != EINTR) return waitpid(child, status, 0) == child;
  return ready > 0 && waitpid(child, status, 0) == child;
}

[[noreturn]] void ExitLike(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  std::signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

}  // namespace

int RunFence(int argc, char** args) {
  if (argc < 4 || std::string(args[2]) != "--" || args[3][0] != '/') {
    std::fprintf(stderr, "usage: nodehook fence DEADLINE_FILE KILL_DELAY_MS -- /PROGRAM [ARGS...]\n");
    return 125;
  }
  const std::string deadline_file = args[0];
  const int64_t kill_delay_ms = std::strtoll(args[1], nullptr, 10);
  const pid_t self = getpid();
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "nodehook fence: fork: %s\n", std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    // Dies with the fence, which dies with the agent (both PR_SET_PDEATHSIG).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != self) _exit(127);
    execv(args[3], args + 3);
    std::fprintf(stderr, "nodehook fence: exec %s: %s\n", args[3], std::strerror(errno));
    _exit(127);
  }
  // The runner's SIGTERM to the group is for the hook: the fence stays to report how it ended.
  std::signal(SIGTERM, SIG_IGN);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (pidfd < 0) {
    kill(child, SIGKILL);
    std::fprintf(stderr, "nodehook fence: pidfd_open: %s\n", std::strerror(errno));
    return 127;
  }
  int status = 0;
  while (true) {
    int64_t left = ReadLeaseDeadline(deadline_file) - MonotonicMillis();
    if (left <= 0) break;
    if (WaitForExit(pidfd, child, left, &status)) ExitLike(status);
  }
  std::fprintf(stderr, "nodehook fence: the deadline passed (lease term over, or rollout slot not renewed); stopping the hook\n");
  kill(-getpgrp(), SIGTERM);
  if (WaitForExit(pidfd, child, kill_delay_ms, &status)) ExitLike(status);
  kill(-getpgrp(), SIGKILL);  // the fence too
  return 137;
}

}  // namespace nodehook
