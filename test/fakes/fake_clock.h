// FakeClock: time moves only when a test calls Advance(), which wakes every waiter whose
// deadline may have passed. Lets tests of timers and backoff run instantly and exactly.
// Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

#include "agent/base/clock.h"

namespace nodehook {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = FromMillis(1'700'000'000'000)) : now_(start) {}

  TimePoint Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }

  void Advance(Duration d) {
    std::vector<Waiter*> waiters;
    {
      std::lock_guard<std::mutex> lock(mu_);
      now_ += d;
      for (auto& w : waiters_) {
        ++w.notifies_pending;
        waiters.push_back(&w);
      }
    }
    // Taking each waiter's own mutex before notifying closes the window between its
    // deadline check and its wait, so no wake-up is lost. A waiter leaves the list only once
    // no Advance() is still to notify it (notifies_pending), so its mutex and condition
    // variable, often on its stack, are alive until this loop is done with them.
    for (Waiter* w : waiters) {
      std::lock_guard<std::mutex> lock(*w->mu);
      {
        std::lock_guard<std::mutex> g(mu_);
        --w->notifies_pending;
      }
      w->cv->notify_all();
    }
  }

  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                 const std::function<bool()>& pred) override {
    std::list<Waiter>::iterator self;
    {
      std::lock_guard<std::mutex> g(mu_);
      self = waiters_.insert(waiters_.end(), Waiter{&cv, lock.mutex(), 0});
    }
    while (true) {
      const bool satisfied = pred();
      if (satisfied || Now() >= deadline) {
        // An Advance() that counted this waiter still takes `lock`'s mutex to notify it: leave
        // only once none is pending, deciding with `lock` held throughout, so what pred() saw is
        // still true when the caller gets the lock back. Otherwise wait on the condition
        // variable (which releases the mutex) and decide again.
        std::lock_guard<std::mutex> g(mu_);
        if (self->notifies_pending == 0) {
          waiters_.erase(self);
          return satisfied;
        }
      } else {
        sleeps_.fetch_add(1);
      }
      cv.wait(lock);
    }
  }

  // How many times a waiter found its deadline not reached and went (back) to sleep. After an
  // Advance(), growth means a waiter saw the new time and decided it was still too early.
  size_t sleeps() const { return sleeps_.load(); }

  // Number of threads currently blocked in WaitUntil: lets a test wait until a component is idle.
  size_t waiters() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiters_.size();
  }

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mu;
    int notifies_pending;  // guarded by mu_
  };
  mutable std::mutex mu_;
  std::atomic<size_t> sleeps_{0};
  TimePoint now_;
  std::list<Waiter> waiters_;
};

}  // namespace nodehook
