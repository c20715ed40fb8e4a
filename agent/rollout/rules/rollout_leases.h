// Where a rollout's shared state lives: Leases in the agents' namespace, two kinds per resource.
//   slot    nodehook-rollout-<rid>-slot-<i>, i < max_nodes: held by the node inside the gate
//           (spec.holderIdentity, renewed within spec.leaseDurationSeconds; a soaking node sets
//           the duration to what is left of its soak and stops renewing, so the slot frees itself)
//           and the object state it works on (annotations: object uid, state digest, phase).
//           The rollout's coordinator hands a slot to a node by writing it in the node's name
//           (a grant); the node then renews it as its own. A canary's slot says so.
//   node    nodehook-rollout-<rid>-node-<hash of the node>: one per node that handles the
//           resource, holder = the node; its annotations carry the node's result per object
//           (the state it last finished or failed, when, and the last message), the object
//           states it waits to run (its requests, node_requests.h) and the policy, so `kubectl
//           nodehook rollout` reads everything from the Leases alone.
// <rid> is a short hash of the resource id and, for a config entry limited to one namespace, that
// namespace: two entries for one plural in two namespaces are two rollouts. Every such Lease
// carries the label nodehook.io/rollout=<rid>, which is what agents watch and kubectl lists, and
// the entry's namespace (if any) in an annotation, by which kubectl picks an object's rollout.
// A node Lease, and a slot Lease while it names a holder, also carry nodehook.io/rollout-for=<hash
// of that node>: each agent watches only the Leases labelled for it, the coordinator all of them.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/object/object_facts.h"  // LabelMap
#include "agent/rollout/rules/node_requests.h"
#include "agent/rollout/rules/node_step.h"

namespace nodehook {

inline constexpr const char* kRolloutLabel = "nodehook.io/rollout";
inline constexpr const char* kRolloutKindLabel = "nodehook.io/rollout-kind";
inline constexpr const char* kRolloutForLabel = "nodehook.io/rollout-for";


// A node's last word on one object of the resource.
struct NodeResult {
  std::string state;  // the digest of the object state it concerns
  bool failed = false;  // false: done (succeeded, verified); true: the node failed that state
  int64_t at_ms = 0;    // when, by the API server's clock
  std::string message;  // the hook's last message (failed) or outcome (done), cut short
  // With failed: the node was a canary of the state when it failed. The state stays halted though
  // nodes that join later change who the canaries are.
  bool canary = false;
};

struct RolloutLease {
  std::string name;
  std::string kind;  // "slot" or "node"
  std::string holder;
  int lease_duration_seconds = 0;
  std::string renew_time;  // MicroTime, for people; expiry is judged by observation, not by it
  std::string resource_version;
  // kind "slot":
  int slot = -1;
  std::string uid;
  std::string state;
  NodeStep phase = NodeStep::kRunning;
  bool canary = false;  // granted to one of the state's canaries (its failure halts the state)
  std::string detail;   // how far the step got, for people (e.g. the pods a drain waits for)
  // kind "node":
  std::map<std::string, NodeResult> results;  // by object uid
  // EncodeNodeResults(results).json when the writer already has it (up to 200 KiB: encoded once
  // per write, not twice); empty: RolloutLeaseJson encodes results itself.
  std::string results_json;
  std::map<std::string, NodeRequest> requests;  // by object uid: the states it waits to run
  std::string policy_json;                    // SharedPolicyJson of the node's config
  std::string resource;                       // ResourceRef::Id()
  std::string scope;                          // the config entry's namespace; "" = every namespace
  std::string owner_uid;  // the node's Node (ownerReferences): deleted with it by the garbage collector
  // The node's labels as its agent last saw them (nullopt: unknown): whom an object's node
  // selector targets, and who is held, for canaries and completion.
  std::optional<LabelMap> labels;
};

// Short, stable hash of the resource id (10 hex digits), used in Lease names and the label.
std::string RolloutId(const std::string& resource_id);
// The rollout of a config entry: RolloutId of its resource id, and of its namespace when it has one.
std::string RolloutIdOf(const ResourceRef& entry);
std::string SlotLeaseName(const std::string& rid, int slot);
// A node's Lease in a family ("rollout", "ready"): nodehook-<family>-<rid>-node-<node>, named
// after the node itself so that the node-bound rules can tell whose name it is (no CEL can hash).
// A node name too long for that (over 253 characters in all) gets the hashed name, which the
// rules refuse: such a node's agent needs cross_node_writes "agents".
std::string NodeLeaseName(const std::string& rid, const std::string& node);
std::string NodeLeaseNameIn(const std::string& family, const std::string& rid, const std::string& node);
// The name before issue 42 (a hash of the node): an agent moves its results from it, then deletes it.
std::string HashedNodeLeaseName(const std::string& family, const std::string& rid, const std::string& node);
// The value of kRolloutForLabel for a node (a label value holds 63 characters, a node name 253).
std::string RolloutForValue(const std::string& node);

Result<RolloutLease> ParseRolloutLease(std::string_view json);
// The whole Lease as JSON (for create, and for update with resource_version set). `family_label`
// is the label that names the rid: kRolloutLabel, or another family's that shares the form
// (readiness/ready_records.h).
std::string RolloutLeaseJson(const std::string& namespace_name, const std::string& rid, const RolloutLease& lease,
                             const char* family_label = kRolloutLabel);

// What readers of the Leases need of a resource's config (kubectl has none): the policy, and the
// ignored paths, without which an object state's digest cannot be computed.
struct SharedPolicy {
  RolloutPolicy policy;
  std::vector<std::string> ignored_paths;
  std::string node_selector_path;  // "" = the resource does not target nodes
};
std::string SharedPolicyJson(const WatchedResource& resource);
Result<SharedPolicy> ParseSharedPolicyJson(std::string_view json);

}  // namespace nodehook
