// WorkQueue: keys of objects that need reconciling. Level-triggered, like client-go's workqueue:
//  - fair: ready keys are handed out first-in, first-out;
//  - stingy: a key is never handed out while it is being processed; adds that arrive meanwhile
//    are merged into one re-run right after Done();
//  - batched: Add() makes a key ready `batch_window` after its last add, but never later than
//    `max_latency` after its first, so a burst of changes is handled once, and an object that
//    never stops changing is still handled;
//  - delayed adds (retries) keep only the earliest schedule per key.
// Thread-safe. Time comes from the injected Clock, so tests drive delays with a FakeClock.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"

namespace nodehook {

struct QueueOptions {
  Duration batch_window{0};  // 0 = ready at once
  Duration max_latency{0};
};

class WorkQueue {
 public:
  explicit WorkQueue(Clock& clock, QueueOptions options = {}) : clock_(clock), options_(options) {}

  // Ready after the batching window (see above).
  void Add(const std::string& key);
  // Ready at once, bypassing the batching window.
  void AddNow(const std::string& key);
  // Ready at now + delay, unless the key is already due sooner.
  void AddAfter(const std::string& key, Duration delay);

  // Blocks until a key is ready; std::nullopt once ShutDown() was called.
  std::optional<std::string> Get();
  // Must be called once for every key Get() returned.
  void Done(const std::string& key);

  void ShutDown();

  size_t ReadyCount() const;
  size_t DelayedCount() const;

 private:
  void MakeReadyLocked(const std::string& key) REQUIRES(mu_);
  void PromoteDueLocked() REQUIRES(mu_);
  TimePoint NextDeadlineLocked() const REQUIRES(mu_);

  struct Batch {
    TimePoint first_add;
    TimePoint due;
  };

  Clock& clock_;
  const QueueOptions options_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> ready_ GUARDED_BY(mu_);           // FIFO of keys waiting for a worker
  std::set<std::string> queued_ GUARDED_BY(mu_);            // the keys in ready_
  std::set<std::string> processing_ GUARDED_BY(mu_);        // handed out, Done() not yet called
  std::set<std::string> dirty_ GUARDED_BY(mu_);             // re-added while processing
  std::map<std::string, TimePoint> delayed_ GUARDED_BY(mu_);  // key -> not before
  std::map<std::string, Batch> batching_ GUARDED_BY(mu_);     // keys inside their batching window
  bool shut_down_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
