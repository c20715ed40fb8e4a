// The way out at uninstall: removes every nodehook finalizer ("nodehook.io/..." of any node) from
// every object of the given resources, so the objects, their namespaces and the CRD can be
// deleted once no agent is left to remove its own. Runs no delete hook: what a delete hook would
// have done on a node is not done. Other controllers' finalizers are kept.
//
// Guarantees: each patch is a JSON patch that tests the exact finalizer list it changes
// (RemoveFinalizerPatch), so a finalizer added or removed meanwhile by anyone is never lost; on a
// conflict the object is read again and the patch recomputed. An object that vanished meanwhile
// counts as done. Selectors of the config are ignored (a {node} selector shows one node's share):
// every object in the resource's namespace scope is looked at.
// Not thread-safe; one call at a time per client.
#pragma once

#include <ostream>
#include <vector>

#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct ReleaseTotals {
  int objects = 0;           // objects looked at
  int released_objects = 0;  // objects that lost at least one nodehook finalizer
  int finalizers = 0;        // finalizers removed
  int failures = 0;          // objects or lists that could not be done (each printed to err)
};

// Prints one line per released object to `out` ("released nodehook.io/node-a from widgets... ns/w1")
// and one per failure to `err`.
ReleaseTotals ReleaseFinalizers(KubeClient& client, const std::vector<ResourceRef>& resources, std::ostream& out,
                                std::ostream& err);

}  // namespace nodehook
