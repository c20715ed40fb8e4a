// The agents' and the steward's RBAC (agent_permissions.h) as the YAML documents `nodehook rbac`
// prints: one flow-style list per field, so `diff` against a shipped file reads well.
// deploy/base's clusterrole.yaml, lease-role.yaml and agent-pods-role.yaml are these for the
// shipped config and the default name. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/admission/agent_permissions.h"
#include "agent/config/config.h"

namespace nodehook {

// The ClusterRole named `name` granting `rules`.
std::string ClusterRoleYaml(const std::string& name, const std::vector<PolicyRule>& rules);

// The Role for cluster-singleton resources: create leases, get/update the one named `lease_name`.
// Bound in the agent's namespace only (deploy/base/lease-role.yaml is this for the defaults).
std::string LeaseRoleYaml(const std::string& name, const std::string& lease_name);
// The Role for the rollouts' slot, node and coordinator Leases and the ready conditions' records
// and writer Lease, in the agent's namespace only.
std::string RolloutRoleYaml(const std::string& name);
// Finalizer mode's agent pods (get, list, watch) and DaemonSets (get), in the agent's namespace
// only: each agent reads its own pod and its DaemonSet, and watches that DaemonSet's pods to
// judge which nodes still have an agent.
// deploy/base/agent-pods-role.yaml is this for the default name.
std::string AgentPodsRoleYaml(const std::string& name);
// With node outputs: each agent reads its own pod (its tolerations); printed when
// AgentPodsRoleYaml, which grants that too, is not. In the agent's namespace only.
std::string OwnPodRoleYaml(const std::string& name);

// The steward's ClusterRole (<name>-steward, StewardRules), the Role for its Leases and the Role
// for the agent pods when it needs them (StewardNeeds*), each bound to the steward's
// ServiceAccount, <name>-steward in `namespace_name` (the Roles' namespace is where they are applied).
std::string StewardRbacYaml(const Config& config, const std::string& name, const std::string& namespace_name);

}  // namespace nodehook
