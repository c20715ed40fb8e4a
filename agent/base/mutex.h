// Mutex and MutexLock: std::mutex and std::lock_guard with clang thread-safety annotations
// (agent/base/thread_annotations.h), so fields marked GUARDED_BY(mu_) are checked at compile time.
// Mutex is thread-safe (it is the lock); MutexLock is a scoped, single-thread object.
#pragma once

#include <mutex>

#include "agent/base/thread_annotations.h"

namespace nodehook {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis the mutex is held where it cannot see it, e.g. in a wait predicate.
  void AssertHeld() ASSERT_CAPABILITY(this) {}

  // Calls `wait(std::unique_lock<std::mutex>&)` with the held mutex, for condition-variable waits
  // (Clock::WaitUntil). The mutex is held again when it returns, also if `wait` throws.
  template <typename Wait>
  auto WaitWith(Wait&& wait) REQUIRES(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    struct KeepLocked {
      std::unique_lock<std::mutex>& lock;
      ~KeepLocked() { lock.release(); }
    } keep{lock};
    return wait(lock);
  }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace nodehook
