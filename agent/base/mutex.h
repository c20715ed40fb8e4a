// Mutex and MutexLock: std::mutex and std::lock_guard with clang thread-safety annotations
// (agent/base/thread_annotations.h), so fields marked GUARDED_BY(mu_) are checked at compile time.
// MutexUnlock releases a held Mutex for a scope; SharedMutex with ReaderMutexLock and
// WriterMutexLock is std::shared_mutex the same way. This is the only file that may use the
// standard lock types (test/layout/check_locking.py checks that).
// The mutexes are thread-safe (they are the locks); the scoped objects are single-thread objects.
#pragma once

#include <condition_variable>
#include <mutex>
#include <shared_mutex>

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

  // cv.wait(lock, pred) with this mutex held; it is held again when it returns. `pred` runs with
  // it held, which the analysis cannot see: a `pred` that reads guarded fields begins with
  // AssertHeld().
  template <typename Pred>
  void Wait(std::condition_variable& cv, Pred pred) REQUIRES(this) {
    WaitWith([&](std::unique_lock<std::mutex>& held) { cv.wait(held, pred); });
  }

 private:
  std::mutex mu_;
};

// Holds `mu` exclusively for its scope: MutexLock for a Mutex, WriterMutexLock for a SharedMutex.
template <typename M>
class SCOPED_CAPABILITY ExclusiveLock {
 public:
  explicit ExclusiveLock(M* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~ExclusiveLock() RELEASE() { mu_->Unlock(); }
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  M* const mu_;
};
using MutexLock = ExclusiveLock<Mutex>;

// The reverse of MutexLock: releases the held `mu` for its scope and takes it again at the end
// (also when the scope is left by an exception), for a call that must run outside the lock in the
// middle of a locked section.
class SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex* mu) RELEASE(mu) : mu_(mu) { mu_->Unlock(); }
  ~MutexUnlock() RELEASE() { mu_->Lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex* const mu_;
};

// std::shared_mutex: held by many readers (ReaderMutexLock) or one writer (WriterMutexLock).
class CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void LockShared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void UnlockShared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex* mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_->LockShared(); }
  ~ReaderMutexLock() RELEASE() { mu_->UnlockShared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

using WriterMutexLock = ExclusiveLock<SharedMutex>;

}  // namespace nodehook
