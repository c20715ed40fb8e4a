// WorkQueue: keys of objects that need reconciling (QueueKey; any hashable key in tests). Level-triggered, like client-go's workqueue:
//  - fair: ready keys are handed out first-in, first-out;
//  - stingy: a key is never handed out while it is being processed; adds that arrive meanwhile
//    are merged into one re-run after Done();
//  - no delay for an idle key: the first change of an object that was not handled recently is
//    ready at once;
//  - batched only when hot: changes to a key handled less than `batch_window` ago (capped by
//    `max_latency`) are merged and handled once, that long after its last run; so a key that
//    changes all the time runs at most once per window, and a change never waits longer;
//  - delayed adds (retries) keep only the earliest schedule per key, in a heap of due times
//    (client-go's delaying_queue), so Get() never scans every waiting key.
// Thread-safe. Time comes from the injected Clock, so tests drive delays with a FakeClock.
// Records nodehook_queue_* metrics when QueueOptions::metrics is set.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/queue/queue_key.h"
#include "agent/queue/work_queue_metrics.h"

namespace nodehook {

struct QueueOptions {
  Duration batch_window{0};  // 0 = every add is ready at once
  Duration max_latency{0};
  Metrics* metrics = nullptr;  // borrowed; must outlive the queue
};

template <typename Key, typename Hash = std::hash<Key>>
class BasicWorkQueue {
 public:
  explicit BasicWorkQueue(Clock& clock, QueueOptions options = {});

  // A change: ready at once, or after the batching window when the key is hot (see above).
  void Add(const Key& key);
  // Ready at once, bypassing the batching window.
  void AddNow(const Key& key);
  // Ready at now + delay, unless the key is already due sooner.
  void AddAfter(const Key& key, Duration delay);

  // Blocks until a key is ready; std::nullopt once ShutDown() was called.
  std::optional<Key> Get();
  // Must be called once for every key Get() returned.
  void Done(const Key& key);
  // For work outside the queue's own workers (periodic checks): takes `key` as if Get() had
  // returned it, unless a worker has it or it is ready for one (false: try again later). A
  // delayed schedule of the key stays as it is. Done() must follow a successful claim; changes
  // that arrive meanwhile are merged into one run after it, as for any key being processed.
  bool TryClaim(const Key& key);

  void ShutDown();

  size_t ReadyCount() const;
  size_t DelayedCount() const;
  // Keys remembered as handled less than a batching window ago: at most those a window holds.
  size_t HotCount() const;
  // Forgets keys handled a window ago or longer and gives back what emptied tables hold; the
  // agent calls it at each housekeeping tick, so the last window of a burst is forgotten even
  // when no change follows it.
  void Trim();

 private:
  struct Due {
    TimePoint when;
    uint64_t seq;  // ties keep insertion order
    Key key;
    bool operator>(const Due& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };

  void MakeReadyLocked(const Key& key) REQUIRES(mu_);
  void ScheduleLocked(const Key& key, TimePoint when) REQUIRES(mu_);
  void PromoteDueLocked() REQUIRES(mu_);
  TimePoint NextDeadlineLocked() REQUIRES(mu_);
  Duration Cooldown() const;
  // When a key handled less than a cooldown ago finished; nullopt when it is idle.
  std::optional<TimePoint> HotSinceLocked(const Key& key, TimePoint now) REQUIRES(mu_);
  void ForgetColdLocked(TimePoint now) REQUIRES(mu_);
  // Gives back the buckets of tables a burst grew that are empty again.
  void ReleaseEmptyTablesLocked() REQUIRES(mu_);

  Clock& clock_;
  const QueueOptions options_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<Key> ready_ GUARDED_BY(mu_);                       // FIFO of keys waiting for a worker
  std::unordered_set<Key, Hash> queued_ GUARDED_BY(mu_);              // the keys in ready_
  std::unordered_map<Key, TimePoint, Hash> processing_ GUARDED_BY(mu_);  // handed out -> since when
  std::unordered_set<Key, Hash> dirty_ GUARDED_BY(mu_);               // re-added while processing
  // Waiting keys: the earliest due time per key, and a heap of (due, key) entries; entries whose
  // time no longer matches waiting_ are stale and skipped.
  std::unordered_map<Key, TimePoint, Hash> waiting_ GUARDED_BY(mu_);
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> heap_ GUARDED_BY(mu_);
  uint64_t seq_ GUARDED_BY(mu_) = 0;
  // Batching: when each recently handled key finished, and the same oldest first for pruning.
  std::unordered_map<Key, TimePoint, Hash> last_done_ GUARDED_BY(mu_);
  std::deque<std::pair<TimePoint, Key>> done_order_ GUARDED_BY(mu_);
  // When a change of each key was first seen since it was last handed out: queue latency.
  std::unordered_map<Key, TimePoint, Hash> changed_at_ GUARDED_BY(mu_);
  bool shut_down_ GUARDED_BY(mu_) = false;
  // Last: its scrape-time probe reads mu_ and processing_, so it must be unregistered (destroyed)
  // before they are.
  QueueMetrics metrics_;
};

// The agent's queue: one key per object of a watched resource.
using WorkQueue = BasicWorkQueue<QueueKey, QueueKeyHash>;

}  // namespace nodehook
