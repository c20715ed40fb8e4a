// CallLog<Call, Answer>: one method of a fake as a test sees it: every call, in order, and the
// answers queued for the next calls (Answer{} once they run out: Ok, exit code 0). A test can
// wait for the calls to reach a count or a state. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

template <typename Call, typename Answer = Status>
class CallLog {
 public:
  // Records `call` and answers it: the next queued answer, or Answer{}.
  Answer Take(Call call) {
    std::lock_guard<std::mutex> lock(mu_);
    RecordLocked(std::move(call));
    return NextLocked();
  }
  // Records `call`; its answer, if any, is taken later with Next().
  void Record(Call call) {
    std::lock_guard<std::mutex> lock(mu_);
    RecordLocked(std::move(call));
  }
  // The next queued answer, or Answer{}.
  Answer Next() {
    std::lock_guard<std::mutex> lock(mu_);
    return NextLocked();
  }
  // An answer for a later call, after those queued before it.
  void Queue(Answer answer) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_.push_back(std::move(answer));
  }

  std::vector<Call> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  size_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_.size();
  }

  // Blocks until `n` calls were made.
  void WaitForCount(size_t n) const {
    std::unique_lock<std::mutex> lock(mu_);
    made_.wait(lock, [&] { return calls_.size() >= n; });
  }
  // Blocks until `pred(calls)` holds; false when `timeout` passes first.
  bool WaitFor(const std::function<bool(const std::vector<Call>&)>& pred, std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(mu_);
    return made_.wait_for(lock, timeout, [&] { return pred(calls_); });
  }

 private:
  void RecordLocked(Call call) {
    calls_.push_back(std::move(call));
    made_.notify_all();
  }
  Answer NextLocked() {
    if (answers_.empty()) return Answer{};
    Answer next = std::move(answers_.front());
    answers_.pop_front();
    return next;
  }

  mutable std::mutex mu_;
  mutable std::condition_variable made_;  // a call was recorded
  std::vector<Call> calls_;               // guarded by mu_
  std::deque<Answer> answers_;            // guarded by mu_
};

}  // namespace nodehook
