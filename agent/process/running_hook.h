// RunningHook: one started hook process and its pipes. Moves stdin bytes in and output bytes
// out without blocking, tells whether the hook has exited, signals its whole process group and
// finally reaps it. The policy (timeouts, grace period, drain window) lives in ProcessRunner.
//
// The leader is not reaped until Finish(): a zombie keeps its pid, which is also the process
// group id, so signalling the group can never hit an unrelated process that reused the number.
// Owned and used by one thread; the destructor kills and reaps whatever is still running.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "agent/process/output_tail.h"
#include "agent/process/spawn.h"
#include "agent/process/unique_fd.h"

namespace nodehook {

class RunningHook {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // `stdin_data` must outlive this object.
  RunningHook(SpawnedChild child, std::string_view stdin_data, size_t output_limit);
  ~RunningHook();
  RunningHook(const RunningHook&) = delete;
  RunningHook& operator=(const RunningHook&) = delete;

  // Waits until `until` or until something happens (output, stdin space, the leader exiting),
  // and moves whatever bytes can be moved without blocking.
  void PumpIo(TimePoint until);

  // True once no process holds the output pipe open any more.
  bool OutputClosed() const { return !output_fd_.valid(); }

  // True once the leader has exited (it stays a zombie until Finish()).
  bool LeaderExited();

  // Sends `sig` to every process in the hook's group. No-op once the leader is reaped, and for
  // a SIGKILL already sent (nothing in the group outlives it, and the pid stays reserved).
  void SignalGroup(int sig);

  // SIGKILLs what is left of the group, reaps the leader, collects buffered output.
  // Returns the leader's wait status, or nullopt if it was reaped by someone else.
  std::optional<int> Finish();

  std::string TakeOutput() { return output_.Take(); }

 private:
  void ReadOutput();
  void WriteStdin();

  pid_t pid_;
  UniqueFd stdin_fd_;
  UniqueFd output_fd_;
  UniqueFd exit_fd_;  // pidfd: readable when the leader exits; invalid on kernels without pidfd_open
  std::string_view pending_stdin_;
  OutputTail output_;
  bool leader_exited_ = false;
  bool status_lost_ = false;
  bool reaped_ = false;
  bool killed_ = false;  // the group got its SIGKILL
};

}  // namespace nodehook
