// Reconciler: what one object needs on this node, and doing it. For each object it
//   1. runs the resource's raw watch-event hook for the events stored for it (raw_event_lane.h);
//   2. gathers the facts as values: the cached object and its ObjectFacts, the stored diffbase
//      and progress, first sight, adoption, targeting, leadership;
//   3. asks the pure Decide (decide.h) for a Plan;
//   4. has the PlanExecutor (plan_executor.h) run the plan's steps, with the resource's modes.
// Modes never show here as flags: each resource's ResourceContext carries its targeting,
// finalizer steps and hook gate, chosen once at start.
// A hook that finishes stores the new diffbase. Every other outcome is recorded as durable
// progress (retries, first start, next attempt, outcome, message) and the object is looked at
// again when it is due, after a restart too. A handler that exhausts its retry limits is marked
// permanently failed and waits for the object to change or an explicit retry.
// Thread-safe: workers call Reconcile() concurrently, never for the same object at once (the
// WorkQueue guarantees that).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/process/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/hooks/retry_policy.h"
#include "agent/reconcile/adoption.h"
#include "agent/reconcile/plan_executor.h"
#include "agent/reconcile/raw_event_lane.h"
#include "agent/reconcile/record_quarantine.h"
#include "agent/reconcile/resource_context.h"
#include "agent/outputs/own_tolerations.h"
#include "storage/state_store.h"

namespace nodehook {

struct ReconcilerOptions {
  std::string node_name;
  std::string work_dir;  // scratch space for hook input files
  std::shared_ptr<const OwnTolerations> own_tolerations{};  // null: not in a pod (outputs_recorder.h)
};

class Reconciler {
 public:
  // Borrows everything; all must outlive the reconciler.
  Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy, OutcomeReporter& reporter,
             ReconcilerOptions options);

  // Handles the object `uid` of `ctx`'s resource as currently cached. Returns when to look at it
  // again; std::nullopt means "not until it changes".
  std::optional<Duration> Reconcile(const ResourceContext& ctx, const std::string& uid, const CancelToken& stop);

  // After a damaged state file was replaced by an empty one (adoption.h).
  void ExpectAdoption(int lists) { adoption_.ExpectAdoption(lists); }
  void AdoptOnce(const std::vector<std::string>& uids) { adoption_.AdoptOnce(uids); }
  // Objects set aside because their state record cannot be read (record_quarantine.h).
  size_t quarantined_records() const { return quarantine_.size(); }

 private:
  // The level-triggered part: create, update, delete, resume.
  std::optional<Duration> ReconcileLevel(const ResourceContext& ctx, const std::string& uid, const CancelToken& stop);

  StateStore& store_;
  Clock& clock_;
  RetryPolicy& policy_;
  const ReconcilerOptions options_;
  Adoption adoption_;
  RawEventLane raw_events_;
  PlanExecutor executor_;
  RecordQuarantine quarantine_;
};

}  // namespace nodehook
