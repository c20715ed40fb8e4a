// RawEventLane: the resource's "event" hook, run once for every watch event the agent observed
// (ADDED, MODIFIED, DELETED), in order, from the events the ResourceTracker stored. Unlike the
// level-triggered handlers it sees every change, not only the latest state; a stored event
// carries its own object, so it runs even after the object is gone. Not to be confused with
// Kubernetes Events (events/), which report outcomes.
// Each event is retried durably like any handler; a failure holds back the events after it.
// Thread-safe: workers run it concurrently, never for the same object at once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "agent/process/action_runner.h"
#include "agent/outputs/outputs_recorder.h"
#include "agent/outputs/own_tolerations.h"
#include "agent/process/scratch_pool.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/hooks/retry_policy.h"
#include "storage/state_store.h"

namespace nodehook {

struct RawEventLaneOptions {
  std::string node_name;
  std::string work_dir;  // scratch space for hook input files
  std::shared_ptr<const OwnTolerations> own_tolerations{};  // null: not in a pod (outputs_recorder.h)
};

class RawEventLane {
 public:
  // Borrows everything; all must outlive the lane.
  RawEventLane(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy, OutcomeReporter& reporter,
               RawEventLaneOptions options);

  // Runs `hook` for the object's stored events, oldest first; stops at the first that is not due
  // or does not succeed. Returns when to look again; nullopt when none is left.
  std::optional<Duration> Run(const WatchedResource& resource, const HookSpec& hook, const std::string& uid,
                              const CancelToken& stop);

 private:
  StateStore& store_;
  ActionRunner& runner_;
  Clock& clock_;
  RetryPolicy& policy_;
  OutcomeReporter& reporter_;
  const RawEventLaneOptions options_;
  ScratchPool scratch_;
  OutputsRecorder outputs_;  // what event hooks publish for this node
};

}  // namespace nodehook
