#include "agent/core/work_queue.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace nodehook {

void WorkQueue::AddNow(const std::string& key) {
  MutexLock lock(&mu_);
  delayed_.erase(key);
  batching_.erase(key);
  MakeReadyLocked(key);
}

void WorkQueue::Add(const std::string& key) {
  if (options_.batch_window <= Duration::zero()) {
    AddNow(key);
    return;
  }
  MutexLock lock(&mu_);
  if (queued_.count(key)) return;  // already ready: the worker will see the latest state
  TimePoint now = clock_.Now();
  auto it = batching_.find(key);
  if (it == batching_.end()) it = batching_.emplace(key, Batch{now, now}).first;
  it->second.due = std::min(now + options_.batch_window, it->second.first_add + options_.max_latency);
  cv_.notify_all();
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) {
    AddNow(key);
    return;
  }
  MutexLock lock(&mu_);
  if (queued_.count(key)) return;  // already due now
  TimePoint when = clock_.Now() + delay;
  auto it = delayed_.find(key);
  if (it == delayed_.end()) {
    delayed_.emplace(key, when);
  } else {
    it->second = std::min(it->second, when);
  }
  cv_.notify_all();  // a sleeping Get() may need an earlier wake-up
}

void WorkQueue::MakeReadyLocked(const std::string& key) {
  if (processing_.count(key)) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) {
    ready_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::PromoteDueLocked() {
  TimePoint now = clock_.Now();
  // Promote in the order the keys fell due, so the ready queue stays first-in, first-out.
  std::vector<std::pair<TimePoint, std::string>> due;
  for (auto it = delayed_.begin(); it != delayed_.end();) {
    if (it->second <= now) {
      due.emplace_back(it->second, it->first);
      it = delayed_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = batching_.begin(); it != batching_.end();) {
    if (it->second.due <= now) {
      due.emplace_back(it->second.due, it->first);
      it = batching_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(due.begin(), due.end());
  for (const auto& [when, key] : due) MakeReadyLocked(key);
}

TimePoint WorkQueue::NextDeadlineLocked() const {
  TimePoint next = TimePoint::max();
  for (const auto& [key, when] : delayed_) next = std::min(next, when);
  for (const auto& [key, batch] : batching_) next = std::min(next, batch.due);
  return next;
}

std::optional<std::string> WorkQueue::Get() {
  MutexLock lock(&mu_);
  while (true) {
    if (shut_down_) return std::nullopt;
    PromoteDueLocked();
    if (!ready_.empty()) {
      std::string key = std::move(ready_.front());
      ready_.pop_front();
      queued_.erase(key);
      processing_.insert(key);
      return key;
    }
    TimePoint deadline = NextDeadlineLocked();
    mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
      return clock_.WaitUntil(cv_, held, deadline, [&] {
        mu_.AssertHeld();  // WaitUntil calls the predicate with the mutex held
        return shut_down_ || !ready_.empty() || NextDeadlineLocked() != deadline;
      });
    });
  }
}

void WorkQueue::Done(const std::string& key) {
  MutexLock lock(&mu_);
  processing_.erase(key);
  if (dirty_.erase(key)) MakeReadyLocked(key);
}

void WorkQueue::ShutDown() {
  MutexLock lock(&mu_);
  shut_down_ = true;
  cv_.notify_all();
}

size_t WorkQueue::ReadyCount() const {
  MutexLock lock(&mu_);
  return ready_.size();
}

size_t WorkQueue::DelayedCount() const {
  MutexLock lock(&mu_);
  return delayed_.size() + batching_.size();
}

}  // namespace nodehook
