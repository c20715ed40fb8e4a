// What `kubectl nodehook rollout status|plan` print for one RolloutView (rollout_view.h).
//   status  a header line (the object, its state digest, the policy, and halted / paused /
//           complete / in progress), then one row per node in rollout order: NODE, CANARY,
//           PHASE (done, running, verifying, soaking, failed, waiting), WAITING FOR / DETAIL
//           (the wait reason and its detail; "may start now" when nothing blocks), MESSAGE;
//   plan    the dry run: the same header, then every node in the order it would go, canaries
//           first, in batches of max_nodes, with what it is doing or what blocks it now.
// Messages are escaped for the terminal. Pure functions; thread-safe.
#pragma once

#include <string>

#include "agent/kubectl/rollout_view.h"

namespace nodehook {

std::string FormatRolloutStatus(const RolloutView& view);
std::string FormatRolloutPlan(const RolloutView& view);

// "max_nodes=2 canary_nodes=1 soak=30s max_failed_nodes=1 windows=0 hold_label=..."
std::string PolicySummary(const RolloutPolicy& policy);
// One node's WAITING FOR / DETAIL cell.
std::string WaitingText(const NodeStatus& status);

}  // namespace nodehook
