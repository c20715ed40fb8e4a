#include "agent/base/cancel.h"

#include <tuple>

namespace nodehook {

void CancelToken::Cancel() {
  {
    MutexLock lock(&mu_);
    if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
    canceller_ = std::this_thread::get_id();
  }
  // One at a time, each taken from the list just before it runs: a registration that ends
  // meanwhile removes a callback not yet run, or waits for the one running.
  while (true) {
    std::function<void()> cb;
    {
      MutexLock lock(&mu_);
      if (callbacks_.empty()) return;
      std::tie(running_id_, cb) = std::move(callbacks_.front());
      callbacks_.erase(callbacks_.begin());
    }
    struct Ran {  // also if the callback throws
      const CancelToken& token;
      ~Ran() { token.FinishRunning(); }
    } ran{*this};
    cb();
  }
}

void CancelToken::FinishRunning() const {
  MutexLock lock(&mu_);
  running_id_ = 0;
  ran_.notify_all();
}

uint64_t CancelToken::OnCancel(std::function<void()> cb) const {
  {
    MutexLock lock(&mu_);
    if (!cancelled_.load(std::memory_order_acquire)) {
      callbacks_.emplace_back(++last_id_, std::move(cb));
      return last_id_;
    }
  }
  cb();
  return 0;
}

void CancelToken::RemoveCallback(uint64_t id) const {
  MutexLock lock(&mu_);
  for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
    if (it->first == id) {
      callbacks_.erase(it);
      return;
    }
  }
  if (canceller_ == std::this_thread::get_id()) return;
  mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
    ran_.wait(held, [&] {
      mu_.AssertHeld();
      return running_id_ != id;
    });
  });
}

bool SleepUnlessCancelled(Clock& clock, Duration d, const CancelToken& stop) {
  Mutex mu;
  std::condition_variable cv;
  CancelRegistration wake(stop, [&] {
    MutexLock lock(&mu);
    cv.notify_all();
  });
  MutexLock lock(&mu);
  WaitUntil(clock, cv, mu, clock.Now() + d, [&] { return stop.cancelled(); });
  return !stop.cancelled();
}

}  // namespace nodehook
