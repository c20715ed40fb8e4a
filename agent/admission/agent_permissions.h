// What the agents (and the steward) need the API server to allow for a config: the RBAC rules,
// derived from what they actually call for it, and which namespaced Roles go with them. The
// node-bound rules (node_bound_policy.h) then confine those writes to each agent's own node;
// rbac_yaml.h writes both as the documents `nodehook rbac` prints.
// Pure functions over Config values; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/config/config.h"

namespace nodehook {

struct PolicyRule {
  std::string api_group;  // "" = core
  std::string resource;
  std::vector<std::string> verbs;  // in the order get, list, watch, patch, create
};

// One rule per resource the agent touches for `config`:
// - each watched resource: list, watch (informers); get and patch in finalizer mode (JSON patches
//   of metadata.finalizers, and a re-read when another agent changed the list first);
// - nodes: list, watch with node targeting (this node's labels); get, list, watch in finalizer
//   mode (the Node watch notices departures; a GET confirms each one before its finalizer goes);
// - events.k8s.io events: create (Warning Events for permanent failures are always on).
// - patch on a cluster-singleton resource (its nodehook.io/singleton-handled annotation).
std::vector<PolicyRule> LeastPrivilegeRules(const Config& config);

// The steward's ClusterRole rules for `config` (docs/security.md): get, list, watch and patch on
// each finalizer resource, Nodes, Events.
std::vector<PolicyRule> StewardRules(const Config& config);
// Whether the steward needs the Role for its Leases (the config has rollouts, ready conditions or
// singleton resources), and the Role for the agent pods (finalizers come off nodes whose agent left).
bool StewardNeedsLeaseRole(const Config& config);
bool StewardNeedsAgentPodsRole(const Config& config);

// What the agents need after a change from `previous` to `config` to release the finalizers
// the change leaves behind (finalizers/finalizer_retirement.h): get, list and patch on each
// resource that left finalizer or singleton mode, or the config.
std::vector<PolicyRule> RetirementRules(const Config& previous, const Config& config);
// True when that release needs the agent pods Role: a resource left singleton mode, whose
// finalizer comes off only once no agent runs the older pod template.
bool RetirementNeedsAgentPods(const Config& previous, const Config& config);

// With node outputs (node_outputs.prefixes): each agent reads its own pod (get on pods), for the
// tolerations a hook's NoExecute taint is judged by (outputs/own_tolerations.h).
bool NeedsOwnPodRole(const Config& config);
// True when `config` needs the agent pods Role (a finalizer resource, finalizer_release_after_seconds > 0).
bool NeedsAgentPodsRole(const Config& config);

// Everything the agents need for `config`, run after `previous` when given (nullptr: none).
struct AgentPermissions {
  std::vector<PolicyRule> rules;  // the ClusterRole: LeastPrivilegeRules, merged with RetirementRules
  bool lease_role = false;        // a singleton resource: the singleton Lease Role
  bool rollout_role = false;      // rollouts or ready conditions: the Role for their Leases
  bool agent_pods_role = false;   // NeedsAgentPodsRole, or RetirementNeedsAgentPods
  bool own_pod_role = false;      // NeedsOwnPodRole, and no agent pods Role (which grants it already)
  // What the node-bound rules guard: `config`, plus the node outputs `previous` kept that `config`
  // drops (they come off the own Node only).
  Config guarded;
};
AgentPermissions DeriveAgentPermissions(const Config& config, const Config* previous);

}  // namespace nodehook
