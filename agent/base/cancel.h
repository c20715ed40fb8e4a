// A one-shot cancellation flag shared between the thread that owns a long operation
// (a watch, a hook run) and the thread that wants it stopped. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"

namespace nodehook {

class CancelToken {
 public:
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Idempotent; runs every registered callback once, one at a time, outside the lock.
  void Cancel();

  // Runs `cb` on cancellation (at once if already cancelled). Used to unblock I/O.
  // Returns an id for RemoveCallback(): long-lived tokens must not pile up callbacks of
  // operations that already finished (see CancelRegistration).
  uint64_t OnCancel(std::function<void()> cb) const;

  // After it returns, the callback neither runs nor is running on another thread: a callback
  // that Cancel() is running is waited for, since it may touch the caller's stack (a callback
  // removing itself from inside its own run does not wait).
  void RemoveCallback(uint64_t id) const;

 private:
  void FinishRunning() const;

  std::atomic<bool> cancelled_{false};
  // Registering a callback does not change whether the token is cancelled, hence mutable.
  mutable Mutex mu_;
  mutable std::condition_variable ran_;  // signalled when running_id_ goes back to 0
  mutable uint64_t last_id_ GUARDED_BY(mu_) = 0;
  mutable std::vector<std::pair<uint64_t, std::function<void()>>> callbacks_ GUARDED_BY(mu_);
  mutable uint64_t running_id_ GUARDED_BY(mu_) = 0;  // the callback Cancel() runs now, 0 if none
  std::thread::id canceller_ GUARDED_BY(mu_);
};

// Scoped OnCancel: when the operation that registered it ends, the callback is removed, and
// waited for if it is running, so it may safely capture the operation's locals.
class CancelRegistration {
 public:
  CancelRegistration(const CancelToken& token, std::function<void()> cb)
      : token_(token), id_(token_.OnCancel(std::move(cb))) {}
  ~CancelRegistration() {
    if (id_ != 0) token_.RemoveCallback(id_);
  }
  CancelRegistration(const CancelRegistration&) = delete;
  CancelRegistration& operator=(const CancelRegistration&) = delete;

 private:
  const CancelToken& token_;
  uint64_t id_;
};

// Waits `d` by `clock` (a FakeClock in tests), or until `stop` fires: what a loop that acts on a
// timer does between rounds. False when `stop` fired.
bool SleepUnlessCancelled(Clock& clock, Duration d, const CancelToken& stop);

}  // namespace nodehook
