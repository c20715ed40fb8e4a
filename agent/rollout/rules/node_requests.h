// A node's requests on its node Lease (annotation nodehook.io/rollout-requests): the object
// states it waits to run a gated hook for, which the rollout's coordinator (coordinator/rollout_coordinator.h)
// reads to hand out slots. Each carries what the rules need and the node alone knows: the
// object's name (for the coordinator's Events), the state a person resumed (annotation), and the
// object's node selector (whom it targets).
//   {"<object uid>": {"state": "<digest>", "object": "<namespace>/<name>", "resume": "<digest>",
//                     "selector": {"<label>": "<value>"}, "started": true}, ...}
// "started": the node's work on that state started and holds the node (its node steps took the
// cordon) but it lost its slot (its agent was away past a lease): it asks to go on, not to start,
// so pauses, holds, halts, windows and canaries do not keep it waiting (rollout_judge.h).
// At most kMaxNodeRequests at once (the caller asks for more as earlier ones are granted), so
// with the results' budget the Lease stays below the API server's 256 KiB of annotations.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "agent/base/status.h"
#include "agent/object/object_facts.h"  // LabelMap

namespace nodehook {

inline constexpr const char* kNodeRequestsAnnotation = "nodehook.io/rollout-requests";
inline constexpr size_t kMaxNodeRequests = 200;
inline constexpr size_t kRequestSelectorBytes = 256;  // a longer selector is cut to its first labels

struct NodeRequest {
  std::string state;
  std::string object;  // namespace/name ("" namespace for cluster-scoped objects: "/name")
  std::string resume;
  std::optional<LabelMap> selector{};
  bool started = false;
  bool operator==(const NodeRequest& o) const {
    return state == o.state && object == o.object && resume == o.resume && selector == o.selector &&
           started == o.started;
  }
};

// "" for no requests (the annotation is then left out).
std::string EncodeNodeRequests(const std::map<std::string, NodeRequest>& requests);

// Into `out`, by uid; "" is none. kInvalid: not a JSON object, or an entry without a state.
Status DecodeNodeRequests(const std::string& json, std::map<std::string, NodeRequest>* out);

}  // namespace nodehook
