#include "agent/core/work_queue.h"

#include <algorithm>

namespace nodehook {

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  delayed_.erase(key);
  MakeReadyLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) {
    Add(key);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
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
  for (auto it = delayed_.begin(); it != delayed_.end();) {
    if (it->second <= now) {
      MakeReadyLocked(it->first);
      it = delayed_.erase(it);
    } else {
      ++it;
    }
  }
}

TimePoint WorkQueue::NextDeadlineLocked() const {
  TimePoint next = TimePoint::max();
  for (const auto& [key, when] : delayed_) next = std::min(next, when);
  return next;
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
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
    size_t delayed_before = delayed_.size();
    TimePoint deadline = NextDeadlineLocked();
    clock_.WaitUntil(cv_, lock, deadline, [&] {
      return shut_down_ || !ready_.empty() || delayed_.size() != delayed_before ||
             NextDeadlineLocked() < deadline;
    });
  }
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.erase(key)) MakeReadyLocked(key);
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  cv_.notify_all();
}

size_t WorkQueue::ReadyCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_.size();
}

size_t WorkQueue::DelayedCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delayed_.size();
}

size_t WorkQueue::ProcessingCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return processing_.size();
}

}  // namespace nodehook
