// ResourceContext: what reconciling one watched resource needs besides the object: its config,
// its cache, and its modes, each chosen once per resource at start (pipeline/) and never null:
//   targeting   KubeNodeTargeting with a node selector, else EveryNode;
//   finalizers  FinalizerKeeper in finalizer mode, SingletonFinalizer for singletons, else
//               NoFinalizers;
//   gate        SingletonGate for cluster-singleton resources, else OpenGate;
//   rollout     RolloutGate for resources with a rollout policy, else NoRollout.
// Plain references; the owner keeps every part alive while the agent runs.
#pragma once

#include "agent/config/config.h"
#include "agent/hooks/hook_gate.h"
#include "agent/reconcile/finalizer_steps.h"
#include "agent/reconcile/rollout_steps.h"
#include "agent/targeting/node_targeting.h"
#include "agent/watch/object_cache.h"

namespace nodehook {

struct ResourceContext {
  const WatchedResource& resource;
  ObjectCache& cache;
  const NodeTargeting& targeting;
  FinalizerSteps& finalizers;
  HookGate& gate;
  // Hooks act on the live object without a change to it (finalizer mode, singletons' finalizer,
  // node targeting, check and snapshot hooks): its bytes stay in the cache once handled.
  bool keeps_bytes = false;
  RolloutSteps& rollout = NoRolloutSteps();
};

// Whether a resource's handled objects keep their bytes in the cache (see keeps_bytes).
bool KeepsObjectBytes(const WatchedResource& resource);

}  // namespace nodehook
