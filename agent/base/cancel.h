// A one-shot cancellation flag shared between the thread that owns a long operation
// (a watch, a hook run) and the thread that wants it stopped. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "agent/base/mutex.h"

namespace nodehook {

class CancelToken {
 public:
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Idempotent; runs every registered callback once, outside the lock.
  void Cancel() {
    std::vector<std::function<void()>> callbacks;
    {
      MutexLock lock(&mu_);
      if (cancelled_.exchange(true)) return;
      for (auto& [id, cb] : callbacks_) callbacks.push_back(std::move(cb));
      callbacks_.clear();
    }
    for (auto& cb : callbacks) cb();
  }

  // Runs `cb` on cancellation (at once if already cancelled). Used to unblock I/O.
  // Returns an id for RemoveCallback(): long-lived tokens must not pile up callbacks of
  // operations that already finished (see CancelRegistration).
  uint64_t OnCancel(std::function<void()> cb) const {
    {
      MutexLock lock(&mu_);
      if (!cancelled_.load()) {
        callbacks_.emplace_back(++last_id_, std::move(cb));
        return last_id_;
      }
    }
    cb();
    return 0;
  }

  void RemoveCallback(uint64_t id) const {
    MutexLock lock(&mu_);
    for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
      if (it->first == id) {
        callbacks_.erase(it);
        return;
      }
    }
  }

 private:
  std::atomic<bool> cancelled_{false};
  // Registering a callback does not change whether the token is cancelled, hence mutable.
  mutable Mutex mu_;
  mutable uint64_t last_id_ GUARDED_BY(mu_) = 0;
  mutable std::vector<std::pair<uint64_t, std::function<void()>>> callbacks_ GUARDED_BY(mu_);
};

// Scoped OnCancel: the callback is removed when the operation that registered it ends.
// Note: a callback already running when RemoveCallback() is called may still finish afterwards.
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

}  // namespace nodehook
