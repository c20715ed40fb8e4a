// Decide: what one object needs on this node, from values alone. The level-triggered rules:
//   object gone, being deleted or not targeted here, and known here   -> delete
//   nothing stored for it                                             -> create (adopt after a
//                                                                        state recovery)
//   essence differs from the stored diffbase                          -> update
//   unchanged, first sight since the agent started, resume hook       -> resume
//   unchanged otherwise                                               -> nothing (mark seen)
// and around them, the modes' steps: a finalizer claimed before the first hook and released
// after the delete (finalizer mode, and the one singleton finalizer); the previous leader's
// handled state adopted, and no hook while another agent leads (singleton); a slot in the gate
// before a gated hook, its verify and its result after (rollout). Retry timing: a handler keeps its progress while it
// works towards the same target; a permanent failure waits for a change; a retry not yet due
// waits.
// Pure: no store, clock, lock or log. Thread-safe. The README's "What runs when" table is its
// table-driven unit test (test/agent/reconcile/decide_test.cc).
#pragma once

#include <optional>
#include <map>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"
#include "agent/reconcile/plan.h"
#include "storage/state_store.h"

namespace nodehook {

// Whether this resource's hooks wait for a Lease (cluster-singleton mode).
enum class Leadership { kNotNeeded, kHeld, kNotHeld };

struct DecideInput {
  std::string uid;
  // The cached object; null for a tombstone known only from the store.
  ObjectPtr object;
  FactsPtr facts;  // with `object`
  bool gone = false;
  bool targeted = true;  // node targeting: the object's selector matches this node
  std::optional<ObjectRecord> record;
  std::vector<HandlerRecord> progress;  // every handler's stored progress for the uid
  bool first_sight = false;  // not handled or found unchanged since the agent started
  bool adopt = false;        // state recovery: store this one as handled, without create
  const std::map<std::string, HookSpec>* hooks = nullptr;  // the resource's hooks by reason; null = none
  bool finalizer_mode = false;
  // The finalizer this resource keeps (FinalizerSteps::Name), for the rules that look for it on
  // the object: for a singleton resource, kSingletonFinalizer on an object means some leader
  // started a hook of it, so its deletion owes the delete hook.
  std::string finalizer;
  Leadership leadership = Leadership::kNotNeeded;
  // The reasons whose hooks pass a fleet rollout's gate (RolloutSteps::Reasons); null or empty: none.
  const std::vector<std::string>* rollout_reasons = nullptr;
  std::string resource_id;  // for fresh progress records
  TimePoint now;
};

// Always a plan: one without reason and steps means nothing to do.
Plan Decide(const DecideInput& in);

}  // namespace nodehook
