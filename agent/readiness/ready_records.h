// Where each node's results for a resource with a ready_condition live: one Lease per node,
//   nodehook-ready-<rid>-node-<node> (rollout/rules/rollout_leases.h: NodeLeaseNameIn)
// in the agents' Lease namespace, in the rollout's node Lease form (rollout/rules/rollout_leases.h): the
// holder is the node, its Node owns it (the garbage collector deletes it with the Node), its
// annotations carry the node's labels (whom an object's node selector targets) and its result
// per object: the state (digest) it last handled, or failed with the message
// (rollout/node_results.h, within the same byte budget). Labelled nodehook.io/ready=<rid> and
// nodehook.io/rollout-kind=node, so the node-bound rules that keep a rollout node Lease to its
// own node keep this one too, and kubectl's rollout commands do not list it.
// A rollout's own node Lease stays apart: it records only gated hooks, and only after
// failure_after_retries failures; this one every state the node handles and every failure.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {

inline constexpr const char* kReadyLabel = "nodehook.io/ready";

std::string ReadyRecordName(const std::string& rid, const std::string& node);

// The whole Lease as JSON (kind "node"; resource_version set for an update).
std::string ReadyRecordJson(const std::string& namespace_name, const std::string& rid, const RolloutLease& record);

// The label selector of every node's record of the rollout id `rid`.
std::string ReadyRecordsSelector(const std::string& rid);

}  // namespace nodehook
