// CheckRunner: runs one periodic "check" hook for one object and decides when the next is due.
// A check runs only for an object this node handled and still handles: live here (live_objects.h),
// with a diffbase equal to its current essence (a pending create or update comes first; the check
// waits one interval). The hook gets the object on stdin like update, NODEHOOK_REASON=check, the
// diffbase as NODEHOOK_OLD_FILE. It never moves the diffbase. Outcomes are those of every hook:
//   done         next check one interval (with jitter) after this one started;
//   in progress  again after the delay asked for (default in_progress_delay_seconds), no retry counted;
//   failed       retried with the agent's backoff, as handler "check" in the store (so metrics,
//                /v1/objects and `nodehook state` show it), with Events as for other handlers;
//   permanent    the retry limits are exhausted: Warning Event, then back to the normal interval
//                (a check is periodic by nature); a success clears the failure.
// The next due time is stored (ScheduleStore) before Run() returns, so a restart keeps it.
// Thread-safe: check threads call Run() concurrently, never for the same object at once.
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>

#include "agent/base/mutex.h"
#include "agent/process/action_runner.h"
#include "agent/outputs/outputs_recorder.h"
#include "agent/outputs/own_tolerations.h"
#include "agent/process/scratch_pool.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/events/event_recorder.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/targeting/node_targeting.h"
#include "agent/watch/object_cache.h"
#include "agent/hooks/retry_policy.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

struct CheckRunnerOptions {
  std::string node_name;
  std::string work_dir;            // scratch space for hook input files
  uint64_t seed = 0;               // interval jitter seed; 0 = random
  Metrics* metrics = nullptr;      // nodehook_hook_* with handler="check"; null = not recorded
  EventRecorder* events = nullptr;            // borrowed; null = no Events (NoEvents())
  const NodeTargeting* targeting = nullptr;   // borrowed; null = every object is this node's (EveryNode)
  std::shared_ptr<const OwnTolerations> own_tolerations{};  // null: not in a pod (outputs_recorder.h)
};

class CheckRunner {
 public:
  // Borrows everything; all must outlive the runner.
  CheckRunner(StateStore& store, ScheduleStore& schedule, ActionRunner& runner, RetryPolicy& policy, Clock& clock,
              CheckRunnerOptions options);

  // Checks `uid` if it is due for one. Returns when to look again; std::nullopt means never
  // (the object is no longer this node's: its schedule is dropped) or the agent is stopping.
  std::optional<Duration> Run(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                              const CancelToken& stop);

  // The first due time of an object never checked here, or a stored one read back after a
  // start (check_timing.h); stores it when it is new.
  TimePoint Schedule(const WatchedResource& resource, const std::string& uid, std::optional<int64_t> stored_due_ms);

 private:
  // Stores the next due time and returns the delay until it.
  Duration DueIn(const WatchedResource& resource, const std::string& uid, TimePoint due);
  double UnitRandom();

  StateStore& store_;
  ScheduleStore& schedule_;
  ActionRunner& runner_;
  RetryPolicy& policy_;
  Clock& clock_;
  const CheckRunnerOptions options_;
  ScratchPool scratch_;  // hook input directories under options_.work_dir, reused across runs
  const NodeTargeting& targeting_;
  OutcomeReporter reporter_;
  OutputsRecorder outputs_;  // what checks publish for this node
  Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace nodehook
