#include "agent/reconcile/plan_executor.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/hooks/hook_attempt.h"
#include "agent/hooks/hook_call.h"
#include "agent/object/essence.h"

namespace nodehook {
namespace {

// What a handler's unfinished run (its hook, or the rollout's verify) waits for; given up, only a change.
const NextWords kHandlerNext{"wait for the object to change", "", " or on the next change"};

}  // namespace

struct PlanExecutor::Execution {
  const ResourceContext& ctx;
  Plan plan;
  const CancelToken& stop;
  std::string resource_id;
  std::optional<Duration> again;  // when to look again, once the plan stops
  bool ran_hook = false;          // a hook ran to success (and is reported)
  std::string message;            // the hook's outcome for the success line
  bool reported = false;          // the success was reported already (a retried release follows)
  HookOutcome outcome;            // the successful run's
  ResumeAt resume = ResumeAt::kHook;  // where the rollout's recorded node steps take up the work
};

PlanExecutor::PlanExecutor(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy,
                           OutcomeReporter& reporter, Adoption& adoption, ExecutorOptions options)
    : store_(store),
      runner_(runner),
      clock_(clock),
      policy_(policy),
      reporter_(reporter),
      adoption_(adoption),
      options_(std::move(options)),
      scratch_(options_.work_dir),
      outputs_(store, reporter.events(), clock, options_.own_tolerations) {}

std::optional<Duration> PlanExecutor::Run(const ResourceContext& ctx, Plan plan, const CancelToken& stop) {
  Execution run{ctx, std::move(plan), stop, ctx.resource.ref.Id(), std::nullopt, false, "", false, HookOutcome{},
                ResumeAt::kHook};
  for (Step step : run.plan.steps) {
    if (!DoStep(run, step)) return run.again;
  }
  return Finish(run);
}

bool PlanExecutor::DoStep(Execution& run, Step step) {
  const ResourceContext& ctx = run.ctx;
  const Plan& p = run.plan;
  const std::string& uid = p.meta.uid;
  switch (step) {
    case Step::kSweepDeparted:
      if (!ctx.finalizers.SweepDeparted(ctx.resource, *p.live_object, *p.live_facts).ok()) {
        run.again = Earliest(run.again, kFinalizerRetry);
      }
      return true;
    case Step::kAwaitLeader:
      run.again = ctx.gate.AwaitHolder(ctx.cache, uid);
      return false;
    case Step::kReleaseStrayFinalizer:
      if (ctx.finalizers.Release(ctx.resource, *p.live_object, *p.live_facts).ok()) return true;
      run.again = kFinalizerRetry;
      return false;
    case Step::kClaimFinalizer:
      if (ctx.finalizers.Claim(ctx.resource, *p.live_object, *p.live_facts).ok()) return true;
      // The watch brings the fresh object; try again with it.
      run.again = Earliest(run.again, kFinalizerRetry);
      return false;
    case Step::kEnterRollout: return EnterRollout(run);
    case Step::kRecordStart:
      return run.resume != ResumeAt::kHook || RecordStart(run);
    case Step::kRunHook:
      if (run.resume == ResumeAt::kHook) return RunHook(run);
      run.plan.without_hook = run.resume == ResumeAt::kVerify
                                  ? "the hook finished before (a reboot or a restart); verified now"
                                  : "the hook finished and was verified before; the node given back now";
      return true;
    case Step::kRebootIfAsked: return run.resume != ResumeAt::kHook || RebootIfAsked(run);
    case Step::kVerifyRollout: return run.resume == ResumeAt::kFinish || VerifyRollout(run);
    case Step::kFinishRollout:
      if (auto wait = ctx.rollout.Succeeded(ctx.resource.ref, p.meta, p.target, run.message)) {
        if (run.ran_hook && !run.reported) ReportSuccess(run, "give the node back in " + SecondsText(*wait));
        run.again = Earliest(run.again, *wait);
        return false;
      }
      return true;
    case Step::kRecordLeaderHandled:
      ctx.gate.Handled(ctx.resource, p.meta, p.reason, p.target);
      return true;
    case Step::kMarkFinalizerPending: return MarkFinalizerPending(run);
    case Step::kReleaseFinalizer: return ReleaseFinalizer(run);
    case Step::kStoreHandled: return StoreHandled(run);
    case Step::kForget: return Forget(run);
    case Step::kMarkSeen:
      ctx.cache.MarkSettled(uid, p.meta.resource_version, p.live_facts ? p.live_facts->digest : "");
      return true;
    case Step::kDropBytes:
      // Those hooks that act on the live object keep its bytes; so does a deleting object.
      if (!ctx.keeps_bytes && !p.meta.deleting) ctx.cache.DropBytes(uid, p.meta.resource_version);
      return true;
    case Step::kEraseTombstone:
      ctx.cache.EraseIfGone(uid);
      return true;
  }
  return true;
}

std::optional<Duration> PlanExecutor::Finish(Execution& run) {
  const Plan& p = run.plan;
  if (!p.problem.ok()) {
    Log(LogLevel::kError, "object unreadable",
        {{"resource", run.resource_id}, {"object", p.meta.Key()}, {"uid", p.meta.uid}, {"error", p.problem.ToString()},
         {"next", "wait for the next change"}});
  }
  if (p.wait_until) return Earliest(run.again, std::max(*p.wait_until - clock_.Now(), Duration::zero()));
  if (p.reason.empty()) return run.again;
  if (run.ran_hook) {
    if (!run.reported) ReportSuccess(run, "idle until the object changes");
  } else {
    // Adoptions and reasons without a hook only move the diffbase: say so, not "hook succeeded".
    Log(LogLevel::kInfo, "handled without a hook",
        {{"object", p.meta.Key()}, {"uid", p.meta.uid}, {"handler", p.reason}, {"outcome", p.without_hook},
         {"next", "idle until the object changes"}});
  }
  return run.again;
}

bool PlanExecutor::EnterRollout(Execution& run) {
  const Plan& p = run.plan;
  GateEntry entry = run.ctx.rollout.Admit(p.meta, p.target, p.live_facts.get());
  switch (entry.kind) {
    case GateEntry::Kind::kInside:
      run.resume = entry.resume;
      return true;
    case GateEntry::Kind::kWait:
      run.again = Earliest(run.again, entry.wait);
      return false;
    case GateEntry::Kind::kFailed: break;
  }
  // The node steps before the hook failed (a drain that timed out): the node failed this state,
  // as a hook out of retries does; it waits for the object to change.
  HandlerRecord progress = p.progress;
  HookOutcome outcome;
  outcome.verdict = HookVerdict::kFailed;
  outcome.message = entry.failure;
  NextAttempt after{kOutcomePermanentFailure, progress.retries + 1, Duration{0}, true};
  RecordNextAttempt(progress, after, entry.failure, clock_.Now());
  Status stored = store_.RecordAttempt(progress);
  reporter_.Unfinished(Subject(run), kHookWords, outcome, after,
                       NextText(kHandlerNext, after, outcome, after.delay) + SaveNote(stored));
  return false;
}

bool PlanExecutor::RebootIfAsked(Execution& run) {
  const Plan& p = run.plan;
  std::optional<Duration> wait = run.ctx.rollout.AfterHook(p.meta, p.target, run.outcome.reboot);
  if (!wait) return true;
  // The hook is done; the node reboots. Its success is reported now, and the handler waits, in
  // progress, for the agent that starts after the reboot (or for the reboot's timeout).
  ReportSuccess(run, "reboot the node, then verify and give it back");
  HandlerRecord progress = p.progress;
  progress.last_outcome = StoredOutcomeName(StoredOutcome::kInProgress);
  progress.last_message = "hook done; the node reboots";
  progress.next_attempt_ms = ToMillis(clock_.Now() + *wait);
  Status stored = store_.RecordAttempt(progress);
  if (!stored.ok()) run.again = StoreFailed(run, stored);
  run.again = Earliest(run.again, *wait);
  return false;
}

bool PlanExecutor::RecordStart(Execution& run) {
  Plan& p = run.plan;
  if (!run.ctx.gate.MayStart(run.ctx.resource, p.meta)) return false;
  // Stored before the hook runs: if the agent dies meanwhile, a restart knows this node touched
  // the object (and its state), so a deletion while it was down still reaches the delete hook.
  HandlerRecord& progress = p.progress;
  progress.last_outcome = kOutcomeRunning;
  progress.last_message = "started";
  progress.next_attempt_ms = ToMillis(clock_.Now());
  progress.last_object = p.new_object.empty() ? p.old_object : p.new_object;
  Status marked = store_.RecordAttempt(progress);
  Log(LogLevel::kInfo, "hook started",
      {{"object", p.meta.Key()}, {"uid", p.meta.uid}, {"handler", p.reason},
       {"retry", progress.retries},
       {"next", "wait for the hook" + SaveNote(marked, "start not saved")}});
  return true;
}

HookOutcome PlanExecutor::RunUnderGates(Execution& run, const std::string& reason, const HookSpec& hook) {
  const Plan& p = run.plan;
  auto diff = DiffEssences(p.old_essence, p.new_essence);  // the one parse a hook run adds
  HookInput input{reason,       options_.node_name, run.resource_id, p.meta,
                  p.old_object, p.new_object,       diff.ok() ? *diff : "[]", p.progress.retries, ""};
  HookSpec prepared = run.ctx.rollout.Prepare(run.ctx.gate.Prepare(hook));
  HookOutcome outcome = nodehook::RunHook(runner_, prepared, input, scratch_, run.stop);
  if (outcome.verdict != HookVerdict::kCancelled) {
    Status recorded = outputs_.Record(run.ctx.resource, p.meta, reason, outcome.node_outputs);
    (void)recorded;  // logged and reported by the recorder; the hook's outcome stands
  }
  if (outcome.verdict != HookVerdict::kDone && outcome.verdict != HookVerdict::kCancelled &&
      (run.ctx.gate.StoppedByTerm(run.stop) || run.ctx.rollout.LostSlot(p.meta))) {
    outcome.verdict = HookVerdict::kCancelled;
  }
  return outcome;
}

bool PlanExecutor::VerifyRollout(Execution& run) {
  const HookSpec* verify = run.ctx.rollout.Verify();
  if (!verify) return true;
  const Plan& p = run.plan;
  run.ctx.rollout.Verifying(p.meta, p.target);
  HookOutcome outcome = RunUnderGates(run, kReasonVerify, *verify);
  if (outcome.verdict == HookVerdict::kDone) return true;
  if (outcome.verdict == HookVerdict::kCancelled) {
    Interrupted(run);
    return false;
  }
  // A failed verify is the node failing this state: the handler's retries count it.
  outcome.message = "verify: " + outcome.message;
  run.again = Earliest(run.again, Postpone(run, run.ctx.resource.hooks.at(p.reason), outcome));
  return false;
}

bool PlanExecutor::RunHook(Execution& run) {
  const Plan& p = run.plan;
  const HookSpec& hook = run.ctx.resource.hooks.at(p.reason);
  HookOutcome outcome = RunUnderGates(run, p.reason, hook);
  switch (outcome.verdict) {
    case HookVerdict::kDone:
      run.ran_hook = true;
      run.message = outcome.LogMessage();
      run.outcome = outcome;
      return true;
    case HookVerdict::kCancelled:
      Interrupted(run);
      return false;
    default:
      run.again = Earliest(run.again, Postpone(run, hook, outcome));
      return false;
  }
}

bool PlanExecutor::MarkFinalizerPending(Execution& run) {
  HandlerRecord& progress = run.plan.progress;
  if (progress.last_outcome == kOutcomeFinalizerPending) return true;
  progress.last_outcome = kOutcomeFinalizerPending;
  progress.last_message = "delete hook succeeded; removing this node's finalizer";
  progress.retries = 0;  // done, not failing
  progress.next_attempt_ms = ToMillis(clock_.Now());
  if (progress.last_object.empty()) progress.last_object = run.plan.old_object;
  Status stored = store_.RecordAttempt(progress);
  if (stored.ok()) return true;
  run.again = StoreFailed(run, stored);
  return false;
}

bool PlanExecutor::ReleaseFinalizer(Execution& run) {
  const Plan& p = run.plan;
  if (!p.live_object) return true;  // gone: nothing holds it
  if (run.ctx.finalizers.Release(run.ctx.resource, *p.live_object, *p.live_facts).ok()) return true;
  // Report the success now: the retried removal does not run (or report) the hook again.
  if (run.ran_hook) ReportSuccess(run, "retry removing this node's finalizer");
  run.again = kFinalizerRetry;
  return false;
}

bool PlanExecutor::StoreHandled(Execution& run) {
  const Plan& p = run.plan;
  Status stored = store_.RecordHandled(ObjectRecord{p.meta.uid, run.resource_id, p.meta.namespace_name, p.meta.name,
                                                    p.new_essence, p.new_object, ToMillis(clock_.Now())},
                                       p.reason);
  if (!stored.ok()) {
    run.again = StoreFailed(run, stored);
    return false;
  }
  if (p.reason == kReasonAdopt) adoption_.Adopted(p.meta.uid, store_);
  return true;
}

bool PlanExecutor::Forget(Execution& run) {
  const std::string& uid = run.plan.meta.uid;
  Status forgotten = store_.Forget(uid);
  if (!forgotten.ok()) {
    run.again = StoreFailed(run, forgotten);
    return false;
  }
  run.ctx.cache.EraseIfGone(uid);
  run.ctx.cache.Unsettle(uid);  // a live object forgotten: its next reconcile is a first sight
  run.ctx.gate.Forgotten(uid);
  run.ctx.rollout.Gone(run.plan.meta);
  return true;
}

Duration PlanExecutor::StoreFailed(Execution& run, const Status& st) {
  const Plan& p = run.plan;
  // The hook did succeed: say so (and count it), though it runs again since that was not saved.
  if (run.ran_hook && !run.reported) ReportSuccess(run, "run it again: its success was not saved");
  Duration delay = policy_.StoreRetryDelay();
  Log(LogLevel::kError, "state store write failed",
      {{"object", p.meta.Key()}, {"uid", p.meta.uid}, {"handler", p.reason}, {"error", st.ToString()},
       {"next", "run the hook again in " + SecondsText(delay)}});
  return delay;
}

ReportSubject PlanExecutor::Subject(const Execution& run) {
  return ObjectSubject(run.ctx.resource, run.plan.meta, run.plan.reason);
}

void PlanExecutor::ReportSuccess(Execution& run, const std::string& next) {
  reporter_.Succeeded(Subject(run), kHookWords, run.outcome, run.plan.earlier_failures,
                      {{"outcome", run.message}, {"next", next}});
  run.reported = true;
}

void PlanExecutor::Interrupted(Execution& run) {
  // The agent is stopping (or the term ended, or the rollout slot was lost), not the hook
  // failing: due again at once, not counted as a retry.
  const bool lost_slot = run.ctx.rollout.LostSlot(run.plan.meta);
  HandlerRecord progress = run.plan.progress;
  progress.last_outcome = kOutcomeInterrupted;
  progress.last_message = lost_slot             ? "stopped: this node's rollout slot was lost"
                          : run.ctx.gate.gated() ? "stopped at agent shutdown or loss of leadership"
                                                 : "stopped at agent shutdown";
  progress.next_attempt_ms = ToMillis(clock_.Now());
  Status stored = store_.RecordAttempt(progress);
  std::string next = lost_slot ? "ask for a slot again now, not counted as a retry"
                               : "run again after restart, not counted as a retry";
  Log(LogLevel::kWarn, "hook interrupted",
      {{"object", run.plan.meta.Key()}, {"uid", run.plan.meta.uid}, {"handler", run.plan.reason},
       {"retries", progress.retries},
       {"next", next + SaveNote(stored, "not saved")}});
  // Nothing else brings a lost slot's object back (a term's end requeues every object itself).
  if (lost_slot) run.again = Earliest(run.again, Duration::zero());
}

std::optional<Duration> PlanExecutor::Postpone(Execution& run, const HookSpec& hook, const HookOutcome& outcome) {
  const Plan& p = run.plan;
  HandlerRecord progress = p.progress;
  NextAttempt after = DecideNextAttempt(policy_, hook, outcome, clock_.Now(), progress);
  Status stored = store_.RecordAttempt(progress);
  run.ctx.rollout.Failed(run.ctx.resource.ref, p.meta, p.target, after.retries, after.permanent, outcome.message);
  reporter_.Unfinished(Subject(run), kHookWords, outcome, after,
                       NextText(kHandlerNext, after, outcome, after.delay) + SaveNote(stored));
  if (after.permanent) return std::nullopt;
  return after.delay;
}

}  // namespace nodehook
