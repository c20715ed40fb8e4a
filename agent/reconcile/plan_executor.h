// PlanExecutor: runs a Plan's steps (plan.h) for one object, in order, and is the one place that
// handles their failures:
//   a finalizer edit or Node read that fails     -> look again in kFinalizerRetry
//   a state store write that fails               -> the retry policy's store delay
//   the hook not done                            -> retry policy (hooks/retry_policy.h): retry,
//                                                   in progress, or give up; durable progress
//   the hook stopped by the agent, the term's end -> "interrupted": due again at once, no retry
//   or the loss of its rollout slot
//   a rollout's gate closed                      -> look again when it says
// Every hook outcome is told by the OutcomeReporter. Thread-safe: workers run plans
// concurrently, never two for the same object at once (the WorkQueue guarantees that).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "agent/process/action_runner.h"
#include "agent/process/scratch_pool.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/hooks/hook_outcome.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/hooks/retry_policy.h"
#include "agent/outputs/outputs_recorder.h"
#include "agent/outputs/own_tolerations.h"
#include "agent/reconcile/adoption.h"
#include "agent/reconcile/plan.h"
#include "agent/reconcile/resource_context.h"
#include "storage/state_store.h"

namespace nodehook {

// How soon to look again when a finalizer edit or a Node read failed.
inline constexpr Duration kFinalizerRetry{1000};

struct ExecutorOptions {
  std::string node_name;
  std::string work_dir;  // scratch space for hook input files
  std::shared_ptr<const OwnTolerations> own_tolerations{};  // null: not in a pod (outputs_recorder.h)
};

class PlanExecutor {
 public:
  // Borrows everything; all must outlive the executor.
  PlanExecutor(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy, OutcomeReporter& reporter,
               Adoption& adoption, ExecutorOptions options);

  // Runs `plan` for an object of `ctx`'s resource. `stop` stops the hook (agent shutdown, or the
  // end of the gate's term). Returns when to look at the object again; nullopt: when it changes.
  std::optional<Duration> Run(const ResourceContext& ctx, Plan plan, const CancelToken& stop);

 private:
  struct Execution;  // one plan's execution state
  // Runs one step of the plan. Like the steps below, returns false when the plan stops there
  // (`run.again` says when to look again).
  bool DoStep(Execution& run, Step step);
  // After the last step: the log line of an unreadable object or of the outcome, and when to look again.
  std::optional<Duration> Finish(Execution& run);
  // Each returns false when the plan stops there (`*again` says when to look again).
  bool RecordStart(Execution& run);
  bool EnterRollout(Execution& run);
  bool RebootIfAsked(Execution& run);
  bool RunHook(Execution& run);
  bool VerifyRollout(Execution& run);
  // Runs `hook` for the plan's object under the resource's gate and rollout slot.
  HookOutcome RunUnderGates(Execution& run, const std::string& reason, const HookSpec& hook);
  bool MarkFinalizerPending(Execution& run);
  bool ReleaseFinalizer(Execution& run);
  bool StoreHandled(Execution& run);
  bool Forget(Execution& run);
  // Not done: durable progress from the retry policy, then the report.
  std::optional<Duration> Postpone(Execution& run, const HookSpec& hook, const HookOutcome& outcome);
  // Stopped by the agent or the term's end: due again at once, no retry counted.
  void Interrupted(Execution& run);
  // The object, uid and handler every report of this run is about.
  static ReportSubject Subject(const Execution& run);
  void ReportSuccess(Execution& run, const std::string& next);
  // Logs a failed store write and returns the retry delay.
  Duration StoreFailed(Execution& run, const Status& st);

  StateStore& store_;
  ActionRunner& runner_;
  Clock& clock_;
  RetryPolicy& policy_;
  OutcomeReporter& reporter_;
  Adoption& adoption_;
  const ExecutorOptions options_;
  ScratchPool scratch_;  // hook input directories under options_.work_dir, reused across runs
  OutputsRecorder outputs_;  // what hooks publish for this node
};

}  // namespace nodehook
