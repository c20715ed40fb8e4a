// A one-shot cancellation flag shared between the thread that owns a long operation
// (a watch, a hook run) and the thread that wants it stopped. Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

namespace nodehook {

class CancelToken {
 public:
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Idempotent; runs every registered callback once, outside the lock.
  void Cancel() {
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_.exchange(true)) return;
      callbacks.swap(callbacks_);
    }
    for (auto& cb : callbacks) cb();
  }

  // Runs `cb` on cancellation (at once if already cancelled). Used to unblock I/O.
  void OnCancel(std::function<void()> cb) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!cancelled_.load()) {
        callbacks_.push_back(std::move(cb));
        return;
      }
    }
    cb();
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::vector<std::function<void()>> callbacks_;  // guarded by mu_
};

}  // namespace nodehook
