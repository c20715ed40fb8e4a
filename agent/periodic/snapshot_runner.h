// SnapshotRunner: runs one resource's node "snapshot" hook over every object of that resource this
// node handles (live_objects.h), as one JSON array on stdin (and in NODEHOOK_NEW_FILE), ordered by
// namespace, name, uid. NODEHOOK_REASON=snapshot.
// It runs only when that set differs from the one the last successful run saw: compared by a
// digest of every object's uid and essence (so status-only changes run nothing), stored with the
// outcome and retry state (ScheduleStore::PutSnapshot). A restart that finds the same set does
// not run it again, unless the hook says run_on_start (then the first Run() after a start does).
// Failures are retried with the agent's backoff (a new set starts afresh) and reported as Events
// on this node's Node object (handler "snapshot"), counted in nodehook_hook_runs_total.
// Thread-safe; the SnapshotLane never runs two snapshots of one resource at once.
#pragma once

#include <optional>
#include <string>

#include "agent/process/action_runner.h"
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

namespace nodehook {

struct SnapshotRunnerOptions {
  std::string node_name;
  std::string work_dir;                      // scratch space for hook input files
  Metrics* metrics = nullptr;                // nodehook_hook_* with handler="snapshot"; null = not recorded
  EventRecorder* events = nullptr;           // borrowed; null = no Events
  const NodeTargeting* targeting = nullptr;  // borrowed; null = every object is this node's
};

class SnapshotRunner {
 public:
  // Borrows everything; all must outlive the runner.
  SnapshotRunner(ScheduleStore& schedule, ActionRunner& runner, RetryPolicy& policy, Clock& clock,
                 SnapshotRunnerOptions options);

  // Runs the hook if the set changed since its last success (or `first_since_start` and
  // run_on_start). Returns when to try again after a failure; std::nullopt when nothing is
  // pending (done, nothing to do, given up until the set changes, or the agent is stopping).
  std::optional<Duration> Run(const WatchedResource& resource, const ObjectCache& cache, bool first_since_start,
                              const CancelToken& stop);

 private:
  // `after` is the retry policy's decision; none when the run was done.
  void Report(const WatchedResource& resource, const SnapshotRecord& progress, const HookOutcome& outcome,
              const std::optional<NextAttempt>& after, std::optional<Duration> again, int earlier_failures);

  ScheduleStore& schedule_;
  ActionRunner& runner_;
  RetryPolicy& policy_;
  Clock& clock_;
  const SnapshotRunnerOptions options_;
  ScratchPool scratch_;  // hook input directories under options_.work_dir, reused across runs
  const NodeTargeting& targeting_;
  OutcomeReporter reporter_;
};

}  // namespace nodehook
