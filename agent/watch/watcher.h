// Watcher: keeps one watched resource's objects flowing into a WatchSink, forever.
// An explicit state machine, as in kube-rs:
//   kEmpty --list--> kListed --watch--> kWatching
//   kEmpty --streaming list: a watch whose initial events end at the initial-events-end
//            bookmark--> kListed, and the same stream goes on as kWatching
//   streaming list ends before that bookmark (an error, a 410, the stream closed) -> one
//            paginated list at once (as client-go's reflector); the next relist streams again
//   streaming list refused (HTTP 4xx or an unusable answer) -> paginated lists from then on
//   clean end of stream        -> kListed (watch again from the last resourceVersion)
//   410 (in-stream or HTTP)    -> kEmpty  (full relist)
//   a malformed line           -> wait (jittered backoff), then relist: watching again from the
//                                 same resourceVersion would meet the same line forever
//   any other error            -> wait (jittered backoff), then retry from where it was
// An object that cannot be taken (too deep, too big, unreadable) never fails a list or a watch:
// it is handed to the sink's OnQuarantined / OnListed(quarantined) and everything else flows.
// A relist hands the sink the complete state, so objects deleted meanwhile are noticed; one also
// happens every `resync_interval`. A stalled stream (no byte within the transport's idle timeout)
// comes back as kTimeout and is reopened.
// Run() occupies the calling thread; the accessors are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <random>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/config/config.h"
#include "agent/watch/backoff.h"
#include "agent/watch/list_strategy.h"
#include "agent/watch/watch_metrics.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

// Receives what the watcher learns. Called from the watcher's thread only.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // The complete current state after a (re)list. `quarantined` objects exist but could not be
  // taken (too deep, too big, unreadable metadata): they must not be taken for deleted.
  virtual void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) = 0;
  // A watch event whose object could not be taken; `type` is ADDED, MODIFIED or DELETED.
  virtual void OnQuarantined(const BadObject& bad, WatchEventType type) = 0;
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
  ListStrategy list_strategy = ListStrategy::kPaginated;
  BackoffPolicy backoff;
  uint64_t seed = 0;  // jitter seed; 0 = random
  Metrics* metrics = nullptr;  // nodehook_watch_* (WatchMetrics); null = not recorded
};

// A mode's or the steward's watch: the config's watch timeout, and the default metrics.
WatcherOptions TunedWatchOptions(const Config& config);

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
  // A hint for operators while listing keeps failing in a telling way, e.g. that the resource
  // does not exist (a CRD typo, or the CRD not installed yet); "" otherwise.
  std::string problem() const;

 private:
  void ListStep(ListStrategy strategy);
  // A failed list's error; a 404 also sets problem() to a hint about the CRD and counts as
  // activity (the server answered), logged once until the resource is served.
  Status ListError(const Status& st);
  // Hands a complete list to the sink and moves to kListed.
  void Listed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined,
              const std::string& resource_version, ListStrategy strategy);
  // Watches from resource_version_; with `streaming_list`, first reads the state as initial events.
  void WatchStep(const CancelToken& stop, bool streaming_list);
  struct WatchRound;  // one watch's events so far
  void OnWatchEvent(WatchRound& round, WatchEvent ev);
  // A streaming list's event before its initial-events-end bookmark.
  void OnInitialEvent(WatchRound& round, WatchEvent ev);
  // What follows the end of a watch (not of a streaming list's initial state).
  void WatchEnded(const CancelToken& stop, const WatchRound& round, const Status& st, TimePoint started);
  // After a streaming list ended before its initial-events-end bookmark: refused for good, or
  // a paginated list this once.
  void StreamingListFailed(const CancelToken& stop, const Status& st, bool expired);
  void WaitBackoff(const CancelToken& stop, const Status& cause, const char* during);
  void SetProblem(std::string problem);
  void SetState(State s);
  void MarkActivity();
  int NextWatchTimeout(bool streaming_list);
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
  ListStrategy list_strategy_;     // only touched by Run()'s thread; falls back to kPaginated
  std::string resource_version_;  // only touched by Run()'s thread
  Status last_error_;              // likewise
  TimePoint last_list_{};          // likewise
  bool served_ = true;             // likewise; false from a 404 on the collection to the next list
  std::mt19937_64 rng_;            // likewise; picks watch timeouts

  Mutex wait_mu_;
  std::condition_variable wait_cv_;
  mutable Mutex problem_mu_;
  std::string problem_ GUARDED_BY(problem_mu_);
  // Last: its scrape-time probe reads the members above, so it must go first.
  WatchMetrics metrics_;
};

const char* WatcherStateName(Watcher::State s);

}  // namespace nodehook
