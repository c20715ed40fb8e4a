// `kubectl nodehook rollout pause|resume OBJECT`: the rollout commands' only writes, each one merge
// patch of the object's annotations. Pause sets nodehook.io/rollout-paused ("true", or
// kRolloutStopNodes with --stop-nodes: the nodes inside stop too); resume removes it and sets
// nodehook.io/rollout-resume to the state the view read, so a halted state continues.
// Not thread-safe (one call).
#pragma once

#include <ostream>

#include "agent/kubectl/rollout_cluster.h"
#include "agent/kubectl/rollout_view.h"

namespace nodehook {

// Prints what changed to `out`; 0, or 1 when the patch failed (said on `err`).
int SteerRollout(RolloutCluster& cluster, const RolloutView& view, bool pause, bool stop_nodes, std::ostream& out,
                 std::ostream& err);

}  // namespace nodehook
