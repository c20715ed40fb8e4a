// The node-bound admission rules (docs/security.md): ValidatingAdmissionPolicies, with their
// bindings, that confine every write of the agents' ServiceAccount to the agent's own node. The
// node is the one the pod's bound token names (request.userInfo.extra
// ['authentication.kubernetes.io/node-name'], Kubernetes 1.32+), not anything the agent says.
//   objects    finalizer-mode resources: an agent may add or remove only its own node's finalizer
//              and change nothing else (no create, no delete, no subresource);
//   singleton  cluster-singleton resources: only the node that holds the singleton Lease (the
//              policy's parameter) may change nodehook.io/singleton or singleton-handled;
//   leases     in the Lease namespace: the singleton Lease taken only when free, renewed and
//              released only by its holder; a rollout node Lease only in its own node's name; a
//              slot only renewed or released by the node it was granted to, never for longer than
//              the config's longest slot lease or soak; no other Lease;
//   events     created (never changed) only as reportingInstance = the own node, and about a Node
//              only about the own one.
// Every policy refuses writes by a token without a node name, saying why, with failurePolicy Fail.
// Work that must cross nodes (departed nodes' finalizers, rollout grants, freeing an expired
// singleton Lease) is the steward's, under its own ServiceAccount, which these rules do not match.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "agent/admission/admission_policy.h"
#include "agent/config/config.h"

namespace nodehook {

// The namespace holding the singleton and rollout Leases: tuning.lease_namespace, else the agents'.
std::string LeaseNamespaceFor(const Config& config, const PolicySubject& subject);

// The longest leaseDurationSeconds an agent may write on a slot it holds: the longest slot lease
// or soak of the config's rollouts (a soaking node sets the rest of its soak); 0 without rollouts.
int MaxSlotLeaseSeconds(const Config& config);

// True when the config gives the agents work that must cross nodes (departed nodes' finalizers,
// rollout grants, taking over an expired singleton Lease) and leaves it to them
// (tuning.cross_node_writes "agents"): the rules would refuse it, so none are printed for it.
bool AgentsWriteAcrossNodes(const Config& config);

// The policies and bindings as YAML documents separated by "---", for `nodehook rbac` and the
// shipped manifests. Always has the events policy; the others when the config needs them.
std::string NodeBoundPolicyYaml(const Config& config, const PolicySubject& subject);

// The message the events policy gives for a write in another node's name: what the agent's
// self-check (node_bound_check.h) looks for in the refusal of its dry-run.
inline constexpr const char* kOtherNodeRefusal = "may write only as its own node";

}  // namespace nodehook
