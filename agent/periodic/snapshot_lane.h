// SnapshotLane: decides when each resource's node snapshot hook runs, and runs it on a thread of
// its own (never on a worker), one snapshot at a time.
//  - Changed(i) after every list and every change of resource i (ResourceTracker::SetOnChange)
//    and after this node's labels changed. Nothing runs before the resource's first list, so
//    the hook never sees a half-known set.
//  - Changes are coalesced: a run starts `window` after the last change, but never later than
//    `max_latency` after the first change it covers (tuning.batch_window_ms / max_latency_ms).
//    Changes that arrive while the hook runs start a new window: they get a run of their own.
//  - A failed run is tried again when the runner says (its backoff), or sooner on a change.
// Thread-safe: Changed() from any thread, ThreadLoop() on one. Time from the injected Clock.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/config/config.h"
#include "agent/watch/object_cache.h"
#include "agent/periodic/snapshot_runner.h"

namespace nodehook {

struct SnapshotLaneOptions {
  Duration window{100};
  Duration max_latency{1000};  // 0 = no cap beyond the window
};

class SnapshotLane {
 public:
  // `resources` and `caches` are indexed alike; all borrowed.
  SnapshotLane(const std::vector<WatchedResource>& resources, std::vector<const ObjectCache*> caches,
               SnapshotRunner& runner, Clock& clock, SnapshotLaneOptions options);

  // True when some resource has a snapshot hook.
  bool enabled() const { return enabled_; }

  void Changed(size_t index);

  // Runs due snapshots until ShutDown(); `hooks` stops a running snapshot hook.
  void ThreadLoop(const CancelToken& hooks);
  // One step of ThreadLoop, for tests: when the next snapshot is due (nullopt: none pending),
  // and running the one due now (false when none is).
  std::optional<TimePoint> NextDue() const;
  bool RunDue(const CancelToken& hooks);
  void ShutDown();


 private:
  struct Pending {
    bool wanted = false;                    // resource has a snapshot hook
    bool listed = false;                    // a change (or list) has been seen
    bool ran_once = false;                  // run_on_start applies only to the first run
    std::optional<TimePoint> first_change;  // of the changes the next run covers
    std::optional<TimePoint> change_due;
    std::optional<TimePoint> retry_due;
  };
  std::optional<TimePoint> DueLocked(const Pending& p) const REQUIRES(mu_);
  // The resource due soonest, and when; nullopt when none is pending.
  std::optional<std::pair<size_t, TimePoint>> NextLocked() const REQUIRES(mu_);
  // Runs the resource due soonest if it is due, releasing mu_ while its hooks run.
  bool RunDueLocked(const CancelToken& hooks) REQUIRES(mu_);

  const std::vector<WatchedResource>& resources_;
  const std::vector<const ObjectCache*> caches_;
  SnapshotRunner& runner_;
  Clock& clock_;
  const SnapshotLaneOptions options_;
  bool enabled_ = false;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_ GUARDED_BY(mu_);
  bool shut_down_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
