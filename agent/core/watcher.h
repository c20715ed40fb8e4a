// Watcher: keeps one watched resource's objects flowing into a WatchSink, forever.
// An explicit state machine, as in kube-rs:
//   kEmpty --list--> kListed --watch--> kWatching
//   clean end of stream        -> kListed (watch again from the last resourceVersion)
//   410 (in-stream or HTTP)    -> kEmpty  (full relist)
//   any other error            -> wait (jittered backoff), then retry from where it was
// A relist hands the sink the complete state, so objects deleted meanwhile are noticed; one also
// happens every `resync_interval`. A stalled stream (no byte within the transport's idle timeout)
// comes back as kTimeout and is reopened.
// Run() occupies the calling thread; the accessors are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/core/backoff.h"
#include "agent/kube/kube_client.h"

namespace nodehook {

// Receives what the watcher learns. Called from the watcher's thread only.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // The complete current state after a (re)list.
  virtual void OnListed(const std::vector<ObjectPtr>& items) = 0;
  // ADDED or MODIFIED.
  virtual void OnObject(ObjectPtr object) = 0;
  // DELETED, with the object's final state.
  virtual void OnDeleted(ObjectPtr last_state) = 0;
};

struct WatcherOptions {
  // Each watch asks the server for a random timeout in [this, 2 x this), so a fleet of agents
  // does not reconnect in step (client-go: [5, 10) min).
  int watch_timeout_seconds = 300;
  Duration resync_interval{0};  // 0 = never
  int page_size = 500;
  BackoffPolicy backoff;
  uint64_t seed = 0;  // jitter seed; 0 = random
};

class Watcher {
 public:
  enum class State { kEmpty, kListed, kWatching };

  Watcher(KubeClient& client, ResourceRef resource, WatchSink& sink, Clock& clock, WatcherOptions options);

  // Lists and watches until `stop` is cancelled.
  void Run(const CancelToken& stop);

  State state() const { return state_.load(); }
  bool synced() const { return synced_.load(); }  // the first list completed
  const ResourceRef& resource() const { return resource_; }
  // When the server last showed signs of life for this resource: a list, an event or a bookmark.
  TimePoint last_activity() const { return FromMillis(last_activity_ms_.load()); }
  // Failed lists/watches since the last success; 0 while healthy.
  int consecutive_failures() const { return consecutive_failures_.load(); }

 private:
  void ListStep();
  void WatchStep(const CancelToken& stop);
  void WaitBackoff(const CancelToken& stop, const Status& cause, const char* during);
  void SetState(State s) { state_.store(s); }
  void MarkActivity();
  int NextWatchTimeout();
  bool ResyncDue() const;

  KubeClient& client_;
  const ResourceRef resource_;
  const std::string resource_id_;
  WatchSink& sink_;
  Clock& clock_;
  const WatcherOptions options_;
  Backoff backoff_;

  std::atomic<State> state_{State::kEmpty};
  std::atomic<bool> synced_{false};
  std::atomic<int64_t> last_activity_ms_{0};
  std::atomic<int> consecutive_failures_{0};
  std::string resource_version_;  // only touched by Run()'s thread
  Status last_error_;              // likewise
  TimePoint last_list_{};          // likewise
  std::mt19937_64 rng_;            // likewise; picks watch timeouts

  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
};

const char* WatcherStateName(Watcher::State s);

}  // namespace nodehook
