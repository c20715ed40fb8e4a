#include "agent/reconcile/decide.h"

#include <algorithm>

namespace nodehook {
namespace {

const char* const kDeletedTarget = "deleted";

bool HasHook(const DecideInput& in, const std::string& reason) { return in.hooks && in.hooks->count(reason) > 0; }

bool Gated(const DecideInput& in, const std::string& reason) {
  return in.rollout_reasons &&
         std::find(in.rollout_reasons->begin(), in.rollout_reasons->end(), reason) != in.rollout_reasons->end();
}

// Nothing for a handler to do: only what keeps the cache and the cluster tidy.
Plan Idle(const DecideInput& in, Plan plan, bool mark_seen) {
  const bool live = in.object && !in.gone;
  if (mark_seen) plan.steps.push_back(Step::kMarkSeen);
  if (in.gone) plan.steps.push_back(Step::kEraseTombstone);
  if (in.record && live) plan.steps.push_back(Step::kDropBytes);
  // A handled object without our finalizer claims it now, so its deletion is owed from here on:
  // finalizer mode switched on for a resource, an upgrade (the singleton finalizer did not
  // exist), or this node's finalizer released while its agent was away (departed agent, config
  // rolled back after a retirement).
  if (in.leadership != Leadership::kNotHeld && in.finalizer_mode && live && !in.object->meta.deleting && in.record &&
      in.facts && in.facts->finalizers_readable.ok() && !in.facts->HasFinalizer(in.finalizer)) {
    plan.steps.insert(plan.steps.begin(), Step::kClaimFinalizer);
  }
  // Our finalizer on an object this node has no memory of (state lost): nothing to clean up, but
  // the finalizer must not block the deletion.
  if (in.finalizer_mode && live && in.object->meta.deleting) plan.steps.push_back(Step::kReleaseStrayFinalizer);
  return plan;
}

// The reason, states and target: which handler the object needs, if any.
// Returns false when no handler does (then `plan` holds only the object's identity).
bool ChooseReason(const DecideInput& in, Plan& plan, bool* unreadable) {
  const bool has_progress = !in.progress.empty();
  // Without the object itself (a tombstone from the store), the last state this node knew: the
  // diffbase, or else what an unfinished handler last saw (its hook was running at a crash).
  std::string remembered = in.record ? in.record->last_object : "";
  if (in.object) {
    plan.meta = in.object->meta;
  } else if (in.record) {
    plan.meta.uid = in.record->uid;
    plan.meta.namespace_name = in.record->namespace_name;
    plan.meta.name = in.record->name;
  } else if (has_progress) {
    plan.meta.uid = in.progress.front().uid;
    plan.meta.namespace_name = in.progress.front().namespace_name;
    plan.meta.name = in.progress.front().name;
    for (const auto& p : in.progress) {
      if (!p.last_object.empty()) remembered = p.last_object;
    }
  } else {
    return false;
  }
  const bool singleton = in.leadership != Leadership::kNotNeeded;
  // An object that does not target this node is, for this node, as good as deleted.
  if (in.gone || !in.object || in.object->meta.deleting || !in.targeted) {
    // Only what this node handled (or started handling) needs a delete here;
    // for a singleton resource, also what another leader handled: its annotation, or the
    // singleton finalizer some leader claimed before a hook (which outlives the annotation write).
    bool leader_handled = singleton && in.facts &&
                          (!in.facts->singleton_digest.empty() ||
                           (!in.finalizer.empty() && in.facts->HasFinalizer(in.finalizer)));
    if (!in.record && !has_progress && !leader_handled) return false;
    plan.reason = kReasonDelete;
    plan.old_object = in.object ? in.object->json : remembered;
    plan.old_essence = in.record ? in.record->essence : "";
    plan.target = kDeletedTarget;
    if (in.finalizer_mode && in.object && !in.gone) {
      // A change to the object during a multi-step deletion runs the delete hook again.
      if (in.facts && in.facts->readable.ok()) plan.target = in.facts->digest;
    }
    return true;
  }
  if (!in.facts || !in.facts->readable.ok()) {
    *unreadable = true;
    return false;
  }
  plan.new_object = in.object->json;
  plan.new_essence = in.facts->essence;
  plan.target = in.facts->digest;
  if (singleton && (!in.record || in.record->essence != plan.new_essence) &&
      in.facts->singleton_digest == plan.target) {
    plan.reason = kReasonAdopt;  // the leader before this one handled exactly this state
    plan.without_hook = "handled by the previous leader";
    return true;
  }
  if (!in.record) {
    plan.reason = in.adopt ? kReasonAdopt : kReasonCreate;
    if (in.adopt) plan.without_hook = "adopted after state recovery";
    return true;
  }
  plan.old_object = in.record->last_object;
  plan.old_essence = in.record->essence;
  if (in.record->essence != plan.new_essence) {
    plan.reason = kReasonUpdate;
    return true;
  }
  if (in.first_sight && HasHook(in, kReasonResume)) {
    plan.reason = kReasonResume;
    return true;
  }
  return false;
}

void AddHandlerSteps(const DecideInput& in, Plan& plan) {
  const bool deleting = plan.reason == kReasonDelete;
  const bool keeps_finalizer = in.finalizer_mode && plan.live_object;
  if (keeps_finalizer && !deleting) plan.steps.push_back(Step::kClaimFinalizer);
  const bool hook = plan.reason != kReasonAdopt && HasHook(in, plan.reason);
  if (!hook && plan.without_hook.empty()) plan.without_hook = "nothing to run";
  if (hook) {
    const bool gated = Gated(in, plan.reason);
    if (gated) plan.steps.push_back(Step::kEnterRollout);
    plan.steps.push_back(Step::kRecordStart);
    plan.steps.push_back(Step::kRunHook);
    if (gated) {
      plan.steps.push_back(Step::kRebootIfAsked);
      plan.steps.push_back(Step::kVerifyRollout);
      plan.steps.push_back(Step::kFinishRollout);
    }
    if (!deleting && in.leadership != Leadership::kNotNeeded) plan.steps.push_back(Step::kRecordLeaderHandled);
  }
  if (deleting) {
    if (keeps_finalizer) {
      plan.steps.push_back(Step::kMarkFinalizerPending);
      plan.steps.push_back(Step::kReleaseFinalizer);
    }
    plan.steps.push_back(Step::kForget);
  } else {
    plan.steps.push_back(Step::kStoreHandled);
    plan.steps.push_back(Step::kMarkSeen);
    plan.steps.push_back(Step::kDropBytes);
  }
}

}  // namespace

const char* StepName(Step step) {
  switch (step) {
    case Step::kSweepDeparted: return "sweep_departed";
    case Step::kAwaitLeader: return "await_leader";
    case Step::kReleaseStrayFinalizer: return "release_stray_finalizer";
    case Step::kClaimFinalizer: return "claim_finalizer";
    case Step::kEnterRollout: return "enter_rollout";
    case Step::kRecordStart: return "record_start";
    case Step::kRunHook: return "run_hook";
    case Step::kRebootIfAsked: return "reboot_if_asked";
    case Step::kVerifyRollout: return "verify_rollout";
    case Step::kFinishRollout: return "finish_rollout";
    case Step::kRecordLeaderHandled: return "record_leader_handled";
    case Step::kMarkFinalizerPending: return "mark_finalizer_pending";
    case Step::kReleaseFinalizer: return "release_finalizer";
    case Step::kStoreHandled: return "store_handled";
    case Step::kForget: return "forget";
    case Step::kMarkSeen: return "mark_seen";
    case Step::kDropBytes: return "drop_bytes";
    case Step::kEraseTombstone: return "erase_tombstone";
  }
  return "unknown";
}

Plan Decide(const DecideInput& in) {
  Plan plan;
  plan.meta.uid = in.uid;
  if (in.object && !in.gone) {
    plan.live_object = in.object;
    plan.live_facts = in.facts;
  }
  if (in.leadership == Leadership::kNotHeld) {
    // Not the leader: the agent looks at every object again when a term starts.
    if (in.gone) plan.steps.push_back(Step::kAwaitLeader);
    return plan;
  }
  // Departed nodes' finalizers: the per-node mode only (the singleton finalizer is no node's).
  if (in.finalizer_mode && in.leadership == Leadership::kNotNeeded && in.object && in.object->meta.deleting &&
      !in.gone) {
    plan.steps.push_back(Step::kSweepDeparted);
  }
  bool unreadable = false;
  if (!ChooseReason(in, plan, &unreadable)) {
    if (unreadable) plan.problem = in.facts ? in.facts->readable : InvalidError("the object has no facts");
    return Idle(in, std::move(plan), !unreadable && in.record && in.object && !in.gone);
  }

  const HandlerRecord* previous = nullptr;
  for (const HandlerRecord& p : in.progress) {
    if (p.handler == plan.reason) previous = &p;
  }
  if (plan.reason == kReasonDelete && previous && previous->last_outcome == kOutcomeFinalizerPending) {
    // The delete hook succeeded before; only this node's finalizer is still to come off.
    plan.progress = *previous;
    plan.without_hook = "delete hook succeeded earlier";
    plan.steps.push_back(Step::kReleaseFinalizer);
    plan.steps.push_back(Step::kForget);
    return plan;
  }
  HandlerRecord& progress = plan.progress;
  progress.uid = plan.meta.uid;
  progress.handler = plan.reason;
  progress.resource = in.resource_id;
  progress.namespace_name = plan.meta.namespace_name;
  progress.name = plan.meta.name;
  progress.target = plan.target;
  progress.first_start_ms = ToMillis(in.now);
  plan.earlier_failures = previous ? previous->retries : 0;
  // Progress carries over only while the handler works towards the same target: a change of
  // the object starts afresh, and is the only thing that revives a permanent failure.
  if (previous && previous->target == plan.target) {
    progress = *previous;
    if (progress.last_outcome == kOutcomePermanentFailure) {
      plan.reason.clear();
      return plan;
    }
    if (FromMillis(progress.next_attempt_ms) > in.now) {
      plan.wait_until = FromMillis(progress.next_attempt_ms);
      return plan;
    }
  }
  AddHandlerSteps(in, plan);
  return plan;
}

}  // namespace nodehook
