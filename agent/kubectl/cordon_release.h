// The other half of the way out at uninstall (release_command.h): gives back the Nodes that
// nodehook's rollouts cordoned (docs/rollouts.md, "Node steps") for work that was still going on
// when the agents were stopped; no agent is left to give them back. Run after the agents are gone.
//
// Only the marks of the rollouts named (`rollouts`: RolloutIdOf of the configs' resources) are
// looked at. A mark that says its node failed the object state (on_failure keep_cordoned: kept
// for a person to look at) is left, and listed, unless `failed_too`. Each mark is given back as
// the agents give it back (GiveCordonBack, node_cordon.h): the mark removed, and the Node
// uncordoned only when no other nodehook mark holds it; a Node someone uncordoned meanwhile, or
// cordoned without a mark, is not touched beyond the mark. Every write carries the Node's
// resourceVersion. Not thread-safe; one call at a time per client.
#pragma once

#include <ostream>
#include <set>
#include <string>

#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct CordonReleaseTotals {
  int marks = 0;         // marks of the named rollouts found
  int uncordoned = 0;    // Nodes uncordoned
  int unmarked = 0;      // marks removed (with or without the uncordon)
  int kept_failed = 0;   // marks of failed nodes left (without failed_too)
  int failures = 0;      // lists or Nodes that could not be done (each printed to err)
};

// Prints one line per mark to `out` ("uncordoned node-1 (widgets... shop/w1, state ...)", "kept
// node-2 cordoned: ... failed: ...") and one per failure to `err`.
CordonReleaseTotals ReleaseCordons(KubeClient& client, const std::set<std::string>& rollouts, bool failed_too,
                                   std::ostream& out, std::ostream& err);

}  // namespace nodehook
