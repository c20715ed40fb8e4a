// StateLock: one writer per state file, so two agents on one node (a DaemonSet rolling update
// with surge, or a new pod starting while the old one terminates) never both act.
//
// The lock is flock(LOCK_EX) on "<state_file>.lock" (created 0600): a kernel lock tied to the open file
// description, so it is released the moment its holder exits, however it exits (SIGKILL
// included) — a stale lock cannot exist. The lock file is separate from the state file because
// corruption recovery moves the state file aside, and SQLite's own POSIX locks on the state
// file are released whenever any descriptor of it is closed. The holder writes "pid N on host H"
// into the lock file so a waiter can say who it is waiting for.
//
// Ownership: a StateLock owns its descriptor (O_CLOEXEC, so hook processes never inherit the
// lock) and releases it on destruction. Move-only. Not thread-safe; Acquire may be called from
// any thread and blocks it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/status.h"

namespace nodehook {

class StateLock {
 public:
  // The path of the lock file that guards `state_file`.
  static std::string LockPathFor(const std::string& state_file);

  // Takes the lock at once, or returns nullopt when another open file description holds it.
  static Result<std::optional<StateLock>> TryAcquire(const std::string& state_file);

  // Takes the lock, waiting while someone else holds it: polls every `poll` (the takeover delay
  // after the holder exits is at most that) until it succeeds or `cancel` fires (kCancelled).
  // `on_waiting` is called once, with the current holder's description ("pid 12 on host a", or
  // "unknown" when the holder wrote nothing yet), when the first try finds the lock taken.
  static Result<StateLock> Acquire(const std::string& state_file, const CancelToken& cancel,
                                   const std::function<void(const std::string& holder)>& on_waiting,
                                   std::chrono::milliseconds poll = std::chrono::milliseconds(200));

  // What the current holder wrote into the lock file; "unknown" when empty or unreadable.
  static std::string DescribeHolder(const std::string& state_file);

  StateLock(StateLock&& other) noexcept;
  StateLock& operator=(StateLock&& other) noexcept;
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;
  ~StateLock();

  const std::string& lock_path() const { return lock_path_; }
  // Whether the lock file was there before this lock was taken: an agent held it before, so a
  // state file should be there too (the lock is taken just before the state file is opened).
  bool lock_file_existed() const { return lock_file_existed_; }
  // What the lock file said when this lock was taken: the last holder's "pid N on host H" when
  // it was killed; "" after a clean stop (a holder clears it on release) or for a new lock file.
  const std::string& previous_holder() const { return previous_holder_; }

 private:
  StateLock(int fd, std::string lock_path) : fd_(fd), lock_path_(std::move(lock_path)) {}
  void Release();

  int fd_ = -1;
  std::string lock_path_;
  bool lock_file_existed_ = false;
  std::string previous_holder_;
};

}  // namespace nodehook
