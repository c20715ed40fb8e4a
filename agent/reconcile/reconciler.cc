#include "agent/reconcile/reconciler.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/reconcile/decide.h"

namespace nodehook {

RolloutSteps& NoRolloutSteps() {
  static NoRollout none;
  return none;
}

bool KeepsObjectBytes(const WatchedResource& resource) {
  return resource.finalizer || resource.singleton || !resource.node_selector_path.empty() || resource.hooks.count(kReasonCheck) > 0 ||
         resource.hooks.count(kReasonSnapshot) > 0;
}

Reconciler::Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, RetryPolicy& policy,
                       OutcomeReporter& reporter, ReconcilerOptions options)
    : store_(store),
      clock_(clock),
      policy_(policy),
      options_(std::move(options)),
      raw_events_(store, runner, clock, policy, reporter,
                  RawEventLaneOptions{options_.node_name, options_.work_dir, options_.own_tolerations}),
      executor_(store, runner, clock, policy, reporter, adoption_,
                ExecutorOptions{options_.node_name, options_.work_dir, options_.own_tolerations}),
      quarantine_(reporter.registry(), reporter.events()) {}

std::optional<Duration> Reconciler::Reconcile(const ResourceContext& ctx, const std::string& uid,
                                              const CancelToken& stop) {
  // Stored events carry their own object, so they are handled even after the object is gone.
  std::optional<Duration> events_again;
  auto event_hook = ctx.resource.hooks.find(kReasonEvent);
  if (event_hook != ctx.resource.hooks.end()) events_again = raw_events_.Run(ctx.resource, event_hook->second, uid, stop);
  return Earliest(events_again, ReconcileLevel(ctx, uid, stop));
}

std::optional<Duration> Reconciler::ReconcileLevel(const ResourceContext& ctx, const std::string& uid,
                                                   const CancelToken& stop) {
  std::optional<CachedObject> entry = ctx.cache.Get(uid);
  if (!entry) return std::nullopt;
  DecideInput in;
  in.uid = uid;
  in.gone = entry->gone;
  // The mode was chosen once (pipeline/mode_set.cc): per-node, the singleton one, or none.
  in.finalizer = ctx.finalizers.Name();
  in.finalizer_mode = !in.finalizer.empty();
  in.resource_id = ctx.resource.ref.Id();
  in.hooks = &ctx.resource.hooks;
  in.rollout_reasons = &ctx.rollout.Reasons();
  std::shared_ptr<const CancelToken> term = ctx.gate.Term();
  if (!term) {
    in.leadership = Leadership::kNotHeld;
    return executor_.Run(ctx, Decide(in), stop);
  }
  in.leadership = ctx.gate.gated() ? Leadership::kHeld : Leadership::kNotNeeded;

  Result<ObjectState> stored = store_.ReadObjectState(uid);
  if (!stored.ok()) {
    const Status& st = stored.status();
    if (st.code() == StatusCode::kCorrupt) {
      // One bad record: set aside on its own (record_quarantine.h); the file is fine otherwise.
      const ObjectMeta& meta = entry->object ? entry->object->meta : *entry->handled_meta;
      quarantine_.Quarantine(ctx.resource.ref, meta, st);
      return std::nullopt;
    }
    Log(LogLevel::kError, "state store read failed",
        {{"resource", in.resource_id}, {"uid", uid}, {"error", st.ToString()},
         {"next", "retry in " + SecondsText(policy_.StoreRetryDelay())}});
    return policy_.StoreRetryDelay();
  }
  quarantine_.Cleared(uid);
  in.record = std::move(stored->record);
  in.progress = std::move(stored->progress);
  in.object = entry->object;
  in.facts = entry->facts;
  if (entry->handled_meta) {
    // Its bytes were dropped once handled: the diffbase, of the same essence, stands in.
    if (!in.record) {
      Log(LogLevel::kError, "object bytes missing",
          {{"resource", in.resource_id}, {"object", entry->handled_meta->Key()}, {"uid", uid},
           {"error", "no diffbase stands in for the dropped bytes"}, {"next", "wait for the next change"}});
      return std::nullopt;
    }
    in.object = std::make_shared<const KubeObject>(KubeObject{*entry->handled_meta, in.record->last_object});
    in.facts = ReadFacts(in.object->json, FactsSpecOf(ctx.resource));
  }
  in.targeted = !in.object || !in.facts || ctx.targeting.Matches(ctx.resource, *in.object, *in.facts);
  in.first_sight = !entry->settled;
  in.adopt = adoption_.AdoptionPending(uid);
  in.now = clock_.Now();

  // A gated hook stops when the agent stops or the term ends, whichever comes first.
  CancelToken hook_stop;
  CancelRegistration on_stop(stop, [&hook_stop] { hook_stop.Cancel(); });
  CancelRegistration on_term_end(*term, [&hook_stop] { hook_stop.Cancel(); });
  return executor_.Run(ctx, Decide(in), hook_stop);
}

}  // namespace nodehook
