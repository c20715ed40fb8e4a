// The NodeCondition a resource keeps on this agent's Node ("node_outputs": {"condition": TYPE}),
// derived from what this node knows of the resource's objects:
//   False    any object with a failing handler (failed, retry_later, permanent failure, or
//            running again after failures), naming the first one and its message; a failure is
//            never hidden behind "in progress";
//   Unknown  the first list is not complete, or an object's latest state is not handled yet;
//   True     every object's latest state is handled here.
// Pure functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/http/objects_endpoint.h"  // SharedSnapshotObject
#include "agent/kube/client/kube_types.h"
#include "storage/state_report.h"

namespace nodehook {

struct NodeConditionValue {
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;  // CamelCase, e.g. "AllHandled"
  std::string message;

  bool operator==(const NodeConditionValue& o) const {
    return status == o.status && reason == o.reason && message == o.message;
  }
  bool operator!=(const NodeConditionValue& o) const { return !(*this == o); }
};

// What the agent's memory says of one resource's objects (agent.h: Agent::ProgressOf).
struct ResourceProgress {
  bool synced = false;    // its watch completed the first list
  size_t objects = 0;     // objects in its cache (deleted ones awaiting their delete hook included)
  size_t unsettled = 0;   // of those, objects whose latest state is not handled yet
};

// A NodeCondition message is for people: cut to this many bytes.
inline constexpr size_t kNodeConditionMessageLimit = 512;

// `objects` is this node's store snapshot (every resource; only those `scope` holds are read).
NodeConditionValue DeriveNodeCondition(const ResourceScope& scope, const std::vector<SharedSnapshotObject>& objects,
                                       const ResourceProgress& progress);

}  // namespace nodehook
