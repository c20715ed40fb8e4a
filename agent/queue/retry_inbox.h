// RetryInbox: "retry now" requests from the admin endpoint, waiting for the agent's
// housekeeping thread to apply them to the state store.
//
// Offer() is what the HTTP thread calls. It takes only this inbox's own mutex, held for a map
// update, so an answer never waits for the state store (which may be busy for seconds).
// Rate limit: requests for one object merge (one for every handler absorbs those for single
// handlers), and an object is handed out at most once per `min_interval`; requests arriving
// sooner wait here until then. So a caller in a tight loop makes a hook run at most once per
// interval, and its latest request is still honoured, never dropped. At most `capacity`
// objects wait at once; beyond that Offer() refuses (the caller answers 429).
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"

namespace nodehook {

struct RetryInboxOptions {
  Duration min_interval = std::chrono::seconds(2);
  size_t capacity = 1024;
};

struct RetryAsk {
  std::string uid;
  std::string handler;  // "" = every pending handler of the object
};

class RetryInbox {
 public:
  RetryInbox(Clock& clock, RetryInboxOptions options) : clock_(clock), options_(options) {}

  // Queues or merges; kTooManyRequests when `capacity` objects are already waiting.
  Status Offer(const std::string& uid, const std::string& handler);
  // Removes and returns what may be applied now, marking those objects as retried now.
  // `*next_due` is lowered to when the earliest of the rest may be handed out.
  std::vector<RetryAsk> TakeDue(TimePoint* next_due);
  // Puts back a request that could not be applied (the store was busy); it is handed out
  // again once its interval has passed. Never refused.
  void PutBack(const RetryAsk& ask);
  // Called (outside the inbox's lock) after each accepted Offer(), e.g. to wake the consumer.
  void SetWaker(std::function<void()> waker);

 private:
  void MergeLocked(const RetryAsk& ask) REQUIRES(mu_);

  Clock& clock_;
  const RetryInboxOptions options_;
  Mutex mu_;
  std::map<std::string, std::set<std::string>> waiting_ GUARDED_BY(mu_);  // uid -> handlers
  std::map<std::string, TimePoint> last_taken_ GUARDED_BY(mu_);  // uid -> when last handed out
  std::function<void()> waker_ GUARDED_BY(mu_);
};

}  // namespace nodehook
