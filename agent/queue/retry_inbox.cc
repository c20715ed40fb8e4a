#include "agent/queue/retry_inbox.h"

namespace nodehook {

void RetryInbox::MergeLocked(const RetryAsk& ask) {
  std::set<std::string>& handlers = waiting_[ask.uid];
  if (handlers.count("") > 0) return;  // already every handler
  if (ask.handler.empty()) handlers.clear();
  handlers.insert(ask.handler);
}

Status RetryInbox::Offer(const std::string& uid, const std::string& handler) {
  std::function<void()> wake;
  {
    MutexLock lock(&mu_);
    if (waiting_.count(uid) == 0 && waiting_.size() >= options_.capacity) {
      return Status(StatusCode::kTooManyRequests,
                    "retry inbox full: " + std::to_string(options_.capacity) + " objects are waiting");
    }
    MergeLocked(RetryAsk{uid, handler});
    wake = waker_;
  }
  if (wake) wake();
  return Status::Ok();
}

std::vector<RetryAsk> RetryInbox::TakeDue(TimePoint* next_due) {
  MutexLock lock(&mu_);
  TimePoint now = clock_.Now();
  // Forget objects whose interval is over, so the map stays as small as the recent traffic.
  for (auto it = last_taken_.begin(); it != last_taken_.end();) {
    it = now - it->second >= options_.min_interval ? last_taken_.erase(it) : std::next(it);
  }
  std::vector<RetryAsk> due;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto last = last_taken_.find(it->first);
    if (last != last_taken_.end()) {
      TimePoint when = last->second + options_.min_interval;
      if (when < *next_due) *next_due = when;
      ++it;
      continue;
    }
    for (const std::string& handler : it->second) due.push_back(RetryAsk{it->first, handler});
    last_taken_[it->first] = now;
    it = waiting_.erase(it);
  }
  return due;
}

void RetryInbox::PutBack(const RetryAsk& ask) {
  MutexLock lock(&mu_);
  MergeLocked(ask);
}

void RetryInbox::SetWaker(std::function<void()> waker) {
  MutexLock lock(&mu_);
  waker_ = std::move(waker);
}

}  // namespace nodehook
