// NodeStep: where a node stands with one object state of a rollout, and the one name each value
// goes by wherever it is shown or kept: the slot Lease's phase annotation (a holder's step), the
// state file's step (storage NodeStepsRecord::step), a node's row in `kubectl nodehook rollout
// status` (NodeStatus), logs and Events. A new step is one value here, one name in node_step.cc,
// and its work in nodework/.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace nodehook {

enum class NodeStep {
  kWaiting,  // outside the gate (status only; an empty step in the state file)
  // Inside a slot, in the order they run.
  kCordoning,
  kDraining,
  kRunning,  // the hook
  kRebooting,
  kVerifying,
  kUncordoning,
  kSoaking,  // done; the slot (and a cordon) kept through the soak
  kDone,     // the state is done on this node (status only)
  kFailed,   // the node failed the state (the state file keeps it while the cordon is kept)
  kDeleted,  // the object is gone and its cordon not given back yet (state file only)
};

const char* NodeStepName(NodeStep step);
// The step of that name; nullopt for any other name ("" included).
std::optional<NodeStep> NodeStepNamed(std::string_view name);

}  // namespace nodehook
