// A rollout's cordon marks, as the coordinator (coordinator/cordoned_nodes.h) and kubectl count
// them against max_nodes (rollout_judge.h): a node the rollout cordoned is disrupted whether or
// not it holds a slot (its agent away past a lease, a reboot past its hold, a failed node kept
// cordoned), until it is uncordoned or a person takes the cordon over.
// A Node counts when it is unschedulable and carries one of the rollout's cordon marks
// (kCordonMarkPrefix + rid + "."; nodework/node_cordon.h). A mark on a schedulable Node is stale
// (someone uncordoned it): it counts for nothing, and the next cordon removes it.
// Pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/kube/client/kube_types.h"

namespace nodehook {

// The Nodes worth reading for the marks: the cordoned ones (fieldSelector spec.unschedulable=true),
// so the cost follows the cordoned nodes, not the fleet.
ResourceRef CordonedNodesResource();

// The objects ("namespace/name, ...") that the rollout `rid`'s cordon marks on the Node name, when
// it is cordoned and carries one; nullopt otherwise (a JSON that is no Node is none).
std::optional<std::string> RolloutCordonOf(const std::string& rid, const std::string& node_json);

// Every Node of `nodes` that the rollout keeps cordoned, with RolloutCordonOf's objects.
std::map<std::string, std::string> RolloutCordons(const std::string& rid, const std::vector<KubeObject>& nodes);

}  // namespace nodehook
