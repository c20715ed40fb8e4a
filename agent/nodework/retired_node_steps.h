// RetiredNodeSteps: at the agent's start, the node steps recorded on this node that no NodeSteps
// will finish any more give their cordon back, once:
//   - an object deleted while its cordon could not be given back (NodeSteps::Gone records it as
//     step "deleted"): every mark of the object on this Node given back;
//   - a resource whose rollout no longer cordons, drains or reboots (the config changed), or that
//     left the config: the cordon of work in progress given back; a node that failed a state
//     stays cordoned for a person (its mark says why; `kubectl uncordon`, or the uninstall's
//     --uncordon-failed, gives it back).
// A mark is found by its object (the hash of the uid in CordonMarkKey), whatever the rollout id,
// and given back as the steps would (GiveCordonBack: never someone else's cordon). A record whose
// cordon could not be given back (the API away, or no right to patch the Node once the config no
// longer cordons) stays, to be tried at the next start, and the log says how to do it by hand.
// No API call when nothing is retired. Not thread-safe: run once, before the work.
#pragma once

#include <vector>

#include "agent/kube/client/kube_types.h"
#include "agent/nodework/node_api.h"
#include "storage/state_store.h"

namespace nodehook {

struct RetiredStepsOutcome {
  int given_back = 0;  // records whose cordon was given back (or held none)
  int kept = 0;        // failed nodes left cordoned for a person
  int left = 0;        // records kept for the next start
};

// `stepping`: the entries whose rollout has node steps now. A record names its resource only;
// where entries of that resource step in some namespaces, its object's namespace (from the
// store's record of the object) says whether one of them goes on with it.
RetiredStepsOutcome GiveBackRetiredSteps(StateStore& store, NodeApi& api, const std::vector<ResourceScope>& stepping);

}  // namespace nodehook
