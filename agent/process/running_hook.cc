#include "agent/process/running_hook.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/process/child_ledger.h"

namespace nodehook {
namespace {

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // always close-on-exec
#else
  (void)pid;
  return -1;
#endif
}

int MillisUntil(RunningHook::TimePoint until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

RunningHook::RunningHook(SpawnedChild child, std::string_view stdin_data, size_t output_limit)
    : pid_(child.pid),
      stdin_fd_(std::move(child.stdin_fd)),
      output_fd_(std::move(child.output_fd)),
      exit_fd_(OpenPidFd(child.pid)),
      pending_stdin_(stdin_data),
      output_(output_limit) {
  if (pending_stdin_.empty()) stdin_fd_.Reset();  // the hook sees EOF at once
}

RunningHook::~RunningHook() {
  if (!reaped_) Finish();
}

void RunningHook::PumpIo(TimePoint until) {
  // poll() ignores negative descriptors, so closed pipes simply drop out.
  pollfd fds[3] = {{output_fd_.get(), POLLIN, 0}, {stdin_fd_.get(), POLLOUT, 0},
                   {leader_exited_ ? -1 : exit_fd_.get(), POLLIN, 0}};
  if (poll(fds, 3, MillisUntil(until)) <= 0) return;  // timeout or EINTR: the caller loops
  if (fds[0].revents != 0) ReadOutput();
  if (fds[1].revents != 0) WriteStdin();
  if (fds[2].revents != 0) LeaderExited();  // stops watching the pidfd, which stays readable
}

void RunningHook::ReadOutput() {
  char buffer[16 * 1024];
  // Bounded per call, so a writer faster than us cannot keep us here forever.
  for (int reads = 0; reads < 64 && output_fd_.valid(); ++reads) {
    const ssize_t n = read(output_fd_.get(), buffer, sizeof buffer);
    if (n > 0) {
      output_.Append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      output_fd_.Reset();  // EOF: every writer is gone (or a read error we cannot recover from)
    }
  }
}

void RunningHook::WriteStdin() {
  while (stdin_fd_.valid() && !pending_stdin_.empty()) {
    const ssize_t n = write(stdin_fd_.get(), pending_stdin_.data(), pending_stdin_.size());
    if (n > 0) {
      pending_stdin_.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      pending_stdin_ = {};  // EPIPE: the hook does not read its stdin, which is its right
    }
  }
  stdin_fd_.Reset();
}

bool RunningHook::LeaderExited() {
  if (leader_exited_) return true;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so the pid (== group id) stays reserved.
  const int rc = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc == 0 && info.si_pid == pid_) {
    leader_exited_ = true;
  } else if (rc < 0 && errno == ECHILD) {
    leader_exited_ = status_lost_ = true;  // reaped elsewhere: its pid may be reused, never signal it
  }
  return leader_exited_;
}

void RunningHook::SignalGroup(int sig) {
  if (reaped_ || status_lost_ || killed_) return;
  kill(-pid_, sig);
  killed_ = sig == SIGKILL;
}

std::optional<int> RunningHook::Finish() {
  if (reaped_) return std::nullopt;
  SignalGroup(SIGKILL);
  std::optional<int> status;
  if (!status_lost_) {
    int raw = 0;
    pid_t rc;
    while ((rc = waitpid(pid_, &raw, 0)) < 0 && errno == EINTR) {
    }
    if (rc == pid_) status = raw;
  }
  reaped_ = true;
  ChildLedger::Instance().Untrack(pid_);
  ReadOutput();  // whatever the group wrote before it died is still in the pipe
  output_fd_.Reset();
  stdin_fd_.Reset();
  exit_fd_.Reset();
  return status;
}

}  // namespace nodehook
