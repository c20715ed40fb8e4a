#include "agent/queue/work_queue.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"

namespace nodehook {
namespace {

// One debug line per queue decision (--log-level debug). Nothing is formatted unless debug is on.
template <typename Key>
void Decided(const char* event, const Key& key, const char* next, Duration in = Duration(-1)) {
  if (!LogEnabled(LogLevel::kDebug)) return;
  std::string when = in < Duration::zero() ? next : std::string(next) + " in " + std::to_string(in.count()) + "ms";
  Log(LogLevel::kDebug, event, {{"key", KeyText(key)}, {"next", when}});
}

// An emptied hash table keeps the buckets of its largest size until it is destroyed: after a
// first list of 10,000 objects, about 80 KB a table for the life of the agent. A table that
// grew past a trickle's size gives them back once it is empty again.
template <typename Table>
void ReleaseIfEmpty(Table& table) {
  constexpr size_t kTrickleBuckets = 64;
  if (table.empty() && table.bucket_count() > kTrickleBuckets) Table().swap(table);
}

}  // namespace

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::ReleaseEmptyTablesLocked() {
  ReleaseIfEmpty(queued_);
  ReleaseIfEmpty(processing_);
  ReleaseIfEmpty(dirty_);
  ReleaseIfEmpty(waiting_);
  ReleaseIfEmpty(last_done_);
  ReleaseIfEmpty(changed_at_);
}

template <typename Key, typename Hash>
BasicWorkQueue<Key, Hash>::BasicWorkQueue(Clock& clock, QueueOptions options) : clock_(clock), options_(options), metrics_(options_.metrics) {
  metrics_.WatchInFlight([this] {
    MutexLock lock(&mu_);
    TimePoint now = clock_.Now();
    double sum = 0, longest = 0;
    for (const auto& [key, since] : processing_) {
      double seconds = static_cast<double>((now - since).count()) / 1000.0;
      sum += seconds;
      longest = std::max(longest, seconds);
    }
    return std::make_pair(sum, longest);
  });
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::AddNow(const Key& key) {
  MutexLock lock(&mu_);
  metrics_.Added();
  changed_at_.try_emplace(key, clock_.Now());
  waiting_.erase(key);  // its heap entry turns stale
  Decided(processing_.count(key) ? "queue: merged into running" : "queue: ready now", key,
          processing_.count(key) ? "run again when it finishes" : "hand to a worker");
  MakeReadyLocked(key);
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::Add(const Key& key) {
  MutexLock lock(&mu_);
  metrics_.Added();
  TimePoint now = clock_.Now();
  changed_at_.try_emplace(key, now);
  if (queued_.count(key)) {  // already ready: the worker will see the latest state
    Decided("queue: merged into ready", key, "hand to a worker");
    return;
  }
  if (processing_.count(key)) {
    dirty_.insert(key);  // Done() decides when it runs again
    Decided("queue: merged into running", key, "run again when it finishes");
    return;
  }
  auto done = HotSinceLocked(key, now);
  if (!done) {
    waiting_.erase(key);  // a change beats a pending retry
    Decided("queue: ready now", key, "hand to a worker");
    MakeReadyLocked(key);
    return;
  }
  // Hot: the changes since its last run are handled together, one window after that run.
  Decided("queue: batched", key, "run", *done + Cooldown() - now);
  ScheduleLocked(key, *done + Cooldown());
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::AddAfter(const Key& key, Duration delay) {
  if (delay <= Duration::zero()) {
    AddNow(key);
    return;
  }
  MutexLock lock(&mu_);
  metrics_.Retried();
  if (queued_.count(key)) {  // already due now
    Decided("queue: retry merged into ready", key, "hand to a worker");
    return;
  }
  Decided("queue: retry scheduled", key, "run", delay);
  ScheduleLocked(key, clock_.Now() + delay);
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::ScheduleLocked(const Key& key, TimePoint when) {
  auto it = waiting_.find(key);
  if (it != waiting_.end() && it->second <= when) return;  // the earlier schedule wins
  waiting_[key] = when;
  heap_.push(Due{when, seq_++, key});
  cv_.notify_all();  // a sleeping Get() may need an earlier wake-up
}

template <typename Key, typename Hash>
Duration BasicWorkQueue<Key, Hash>::Cooldown() const {
  Duration d = options_.batch_window;
  if (options_.max_latency > Duration::zero()) d = std::min(d, options_.max_latency);
  return std::max(d, Duration::zero());
}

template <typename Key, typename Hash>
std::optional<TimePoint> BasicWorkQueue<Key, Hash>::HotSinceLocked(const Key& key, TimePoint now) {
  if (Cooldown() <= Duration::zero()) return std::nullopt;
  ForgetColdLocked(now);
  auto it = last_done_.find(key);
  if (it == last_done_.end() || now - it->second >= Cooldown()) return std::nullopt;
  return it->second;
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::ForgetColdLocked(TimePoint now) {
  // done_order_ is oldest first; a key done again later has a newer entry, so only drop
  // last_done_ when the entry is the key's latest.
  while (!done_order_.empty() && now - done_order_.front().first >= Cooldown()) {
    auto it = last_done_.find(done_order_.front().second);
    if (it != last_done_.end() && it->second == done_order_.front().first) last_done_.erase(it);
    done_order_.pop_front();
  }
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::MakeReadyLocked(const Key& key) {
  if (processing_.count(key)) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) {
    ready_.push_back(key);
    cv_.notify_one();
  }
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::PromoteDueLocked() {
  TimePoint now = clock_.Now();
  // The heap yields keys in the order they fell due, so the ready queue stays first-in, first-out.
  while (!heap_.empty() && heap_.top().when <= now) {
    Due top = heap_.top();
    heap_.pop();
    auto it = waiting_.find(top.key);
    if (it == waiting_.end() || it->second != top.when) continue;  // stale entry
    waiting_.erase(it);
    MakeReadyLocked(top.key);
  }
}

template <typename Key, typename Hash>
TimePoint BasicWorkQueue<Key, Hash>::NextDeadlineLocked() {
  while (!heap_.empty()) {
    auto it = waiting_.find(heap_.top().key);
    if (it != waiting_.end() && it->second == heap_.top().when) return heap_.top().when;
    heap_.pop();  // stale
  }
  return TimePoint::max();
}

template <typename Key, typename Hash>
std::optional<Key> BasicWorkQueue<Key, Hash>::Get() {
  MutexLock lock(&mu_);
  while (true) {
    if (shut_down_) return std::nullopt;
    PromoteDueLocked();
    if (!ready_.empty()) {
      Key key = std::move(ready_.front());
      ready_.pop_front();
      queued_.erase(key);
      TimePoint now = clock_.Now();
      processing_.emplace(key, now);
      auto changed = changed_at_.find(key);
      if (changed != changed_at_.end()) {
        metrics_.Waited(now - changed->second);
        changed_at_.erase(changed);
      }
      metrics_.Depth(ready_.size(), waiting_.size(), processing_.size());
      ReleaseEmptyTablesLocked();
      return key;
    }
    metrics_.Depth(ready_.size(), waiting_.size(), processing_.size());
    TimePoint deadline = NextDeadlineLocked();
    WaitUntil(clock_, cv_, mu_, deadline, [&] {
      mu_.AssertHeld();
      return shut_down_ || !ready_.empty() || (!heap_.empty() && heap_.top().when < deadline);
    });
  }
}

template <typename Key, typename Hash>
bool BasicWorkQueue<Key, Hash>::TryClaim(const Key& key) {
  MutexLock lock(&mu_);
  if (shut_down_ || processing_.count(key) || queued_.count(key)) return false;
  processing_.emplace(key, clock_.Now());
  return true;
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::Done(const Key& key) {
  MutexLock lock(&mu_);
  TimePoint now = clock_.Now();
  auto it = processing_.find(key);
  if (it != processing_.end()) {
    metrics_.Worked(now - it->second);
    processing_.erase(it);
  }
  if (Cooldown() > Duration::zero()) {
    // Forgotten here too, not only when a key is added: after a burst (a first list of 10,000
    // objects) no add may come for hours, and each remembered key holds memory.
    ForgetColdLocked(now);
    last_done_[key] = now;
    done_order_.emplace_back(now, key);
  }
  if (dirty_.erase(key)) {
    // Changed while it ran: hot by definition, so it runs again one window from now.
    if (Cooldown() > Duration::zero()) {
      Decided("queue: changed while running", key, "run", Cooldown());
      ScheduleLocked(key, now + Cooldown());
    } else {
      Decided("queue: changed while running", key, "hand to a worker");
      MakeReadyLocked(key);
    }
  }
  metrics_.Depth(ready_.size(), waiting_.size(), processing_.size());
  ReleaseEmptyTablesLocked();
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::ShutDown() {
  MutexLock lock(&mu_);
  shut_down_ = true;
  cv_.notify_all();
}

template <typename Key, typename Hash>
size_t BasicWorkQueue<Key, Hash>::ReadyCount() const {
  MutexLock lock(&mu_);
  return ready_.size();
}

template <typename Key, typename Hash>
size_t BasicWorkQueue<Key, Hash>::HotCount() const {
  MutexLock lock(&mu_);
  return last_done_.size();
}

template <typename Key, typename Hash>
size_t BasicWorkQueue<Key, Hash>::DelayedCount() const {
  MutexLock lock(&mu_);
  return waiting_.size();
}

template <typename Key, typename Hash>
void BasicWorkQueue<Key, Hash>::Trim() {
  MutexLock lock(&mu_);
  ForgetColdLocked(clock_.Now());
  ReleaseEmptyTablesLocked();
}

template class BasicWorkQueue<QueueKey, QueueKeyHash>;
template class BasicWorkQueue<std::string>;  // for tests and tools that key by text

}  // namespace nodehook
