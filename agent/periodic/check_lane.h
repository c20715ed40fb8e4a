// CheckLane: the low-priority lane that runs periodic checks (check_runner.h) next to the
// WorkQueue's workers, never instead of them.
//  - Its own threads, max_concurrent_checks of them: at most that many checks run at once, and
//    no worker ever runs a check, so create/update/delete work never waits for a free worker
//    because of checks.
//  - Due times live in a private WorkQueue used as a heap of due keys (no batching, no metrics).
//  - A check claims its object in the main WorkQueue first (WorkQueue::TryClaim), so an object is
//    never handled by a check and another hook at once. An object a worker has (or is about to
//    get) is not waited for: its check is tried again a second later. A change arriving during a
//    check is merged and handled right after it, as for any hook.
//  - Objects join through Track(), called after each reconcile: the first time a uid is seen
//    in this process, its stored due time is read back (check_timing.h) or a first one planned.
// Thread-safe. Keys are ResourceTracker queue keys ("<resource index>/<uid>").
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/config/config.h"
#include "agent/periodic/check_runner.h"
#include "agent/watch/object_cache.h"
#include "agent/queue/work_queue.h"
#include "storage/schedule_store.h"

namespace nodehook {

// How soon a check whose object is busy with another hook is tried again.
inline constexpr Duration kCheckBusyRetry{1000};

class CheckLane {
 public:
  // `resources` and `caches` are indexed alike (one cache per watched resource); all borrowed.
  CheckLane(const std::vector<WatchedResource>& resources, std::vector<ObjectCache*> caches, WorkQueue& main_queue,
            CheckRunner& runner, ScheduleStore& schedule, Clock& clock, int max_concurrent);

  // True when some resource has a check hook (otherwise the lane needs no threads).
  bool enabled() const { return enabled_; }
  int threads() const { return max_concurrent_; }

  // The object was reconciled: from now on it is checked (the runner skips it while it is not
  // this node's, and drops it once it is gone).
  void Track(size_t index, const std::string& uid);
  // Check it now (a retry request), if it is tracked.
  void RunSoon(size_t index, const std::string& uid);

  // One check thread: runs due checks until ShutDown(); `hooks` stops running check hooks.
  void ThreadLoop(const CancelToken& hooks);
  void ShutDown() { due_.ShutDown(); }

 private:
  // Due times stored for `index`'s resource, read once per process. The map is part of stored_:
  // use it only while mu_ is held.
  std::map<std::string, int64_t>& StoredLocked(size_t index) REQUIRES(mu_);

  const std::vector<WatchedResource>& resources_;
  const std::vector<ObjectCache*> caches_;
  WorkQueue& main_;
  CheckRunner& runner_;
  ScheduleStore& schedule_;
  Clock& clock_;
  const int max_concurrent_;
  bool enabled_ = false;
  WorkQueue due_;
  Mutex mu_;
  std::set<QueueKey> tracked_ GUARDED_BY(mu_);
  std::map<size_t, std::map<std::string, int64_t>> stored_ GUARDED_BY(mu_);  // dropped as uids join
};

}  // namespace nodehook
