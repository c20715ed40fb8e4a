// `nodehook rbac --config FILE`: prints the least-privilege ClusterRole for a config, derived
// from what the agent actually calls for it (see LeastPrivilegeRules). deploy/base/clusterrole.yaml
// is this command's output for the shipped config, and a test keeps the two equal.
// Pure functions plus one command entry point; not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>
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
// each finalizer resource, Nodes, Events; and StewardRbacYaml: that ClusterRole (<name>-steward),
// the Role for its Leases when the config has rollouts or singleton resources, and the Role for the
// agent pods when finalizers come off nodes whose agent left; each bound to the steward's
// ServiceAccount, <name>-steward in `namespace_name` (the Roles' namespace is where they are applied).
std::vector<PolicyRule> StewardRules(const Config& config);
std::string StewardRbacYaml(const Config& config, const std::string& name, const std::string& namespace_name);

// What the agents need after a change from `previous` to `config` to release the finalizers
// the change leaves behind (finalizers/finalizer_retirement.h): get, list and patch on each
// resource that left finalizer or singleton mode, or the config.
std::vector<PolicyRule> RetirementRules(const Config& previous, const Config& config);
// True when that release needs AgentPodsRoleYaml: a resource left singleton mode, whose
// finalizer comes off only once no agent runs the older pod template.
bool RetirementNeedsAgentPods(const Config& previous, const Config& config);

// The ClusterRole as YAML, one flow-style list per field so `diff` against a file reads well.
std::string ClusterRoleYaml(const std::string& name, const std::vector<PolicyRule>& rules);

// The Role for cluster-singleton resources: create leases, get/update the one named `lease_name`.
// Bound in the agent's namespace only (deploy/base/lease-role.yaml is this for the defaults).
std::string LeaseRoleYaml(const std::string& name, const std::string& lease_name);
// Finalizer mode's agent pods (get, list, watch) and DaemonSets (get), in the agent's namespace
// only: each agent reads its own pod and its DaemonSet, and watches that DaemonSet's pods to
// judge which nodes still have an agent.
// deploy/base/agent-pods-role.yaml is this for the default name.
std::string AgentPodsRoleYaml(const std::string& name);
// With node outputs (node_outputs.prefixes): each agent reads its own pod (get on pods), for the
// tolerations a hook's NoExecute taint is judged by (outputs/own_tolerations.h); printed when
// AgentPodsRoleYaml, which grants that too, is not. In the agent's namespace only.
std::string OwnPodRoleYaml(const std::string& name);
bool NeedsOwnPodRole(const Config& config);
// True when `config` needs AgentPodsRoleYaml (a finalizer resource, finalizer_release_after_seconds > 0).
bool NeedsAgentPodsRole(const Config& config);

struct RbacCommandArgs {
  std::string config_path;
  std::string previous_path;  // the config the agents ran before: keep what its release needs
  std::string name = "nodehook";
  std::string namespace_name = "nodehook";   // the agents' namespace: the admission rules match their account
  std::string service_account = "nodehook";
  std::string part = "all";  // "rbac" (the agents' roles), "admission", "steward" (its roles) or "all"
};

// The node-bound admission rules for `config` (admission/node_bound_policy.h), or a comment saying
// why there are none (the agents write across nodes themselves).
void PrintAdmission(const Config& config, const RbacCommandArgs& args, std::ostream& out);

CLI::App* AddRbacCommand(CLI::App& app, RbacCommandArgs* args);

// Loads the config (node_name may be missing: it does not change the role) and prints the
// ClusterRole to `out`, followed by "---" and LeaseRoleYaml when a resource is a singleton. Returns 0, or 2 with every config problem on `err`.
int RunRbacCommand(const RbacCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace nodehook
