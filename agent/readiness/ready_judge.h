// The condition a resource's ready_condition keeps on each object, from every node's record
// (ready_records.h) as one board (rollout/rules/board_view.h): the nodes that handle the object are
// those with a record whose labels its node selector matches (rollout/rules/rollout_judge.h's rule).
//   True   AllNodesHandled  every one of them handled the object's current state: "40/40 nodes"
//   False  Failing          any of them failed it: "38/40 nodes; failing on node-x: <message>"
//   False  InProgress       otherwise: "12/40 nodes; waiting for node-a, node-b, node-c and 25 more"
//   False  NoNodes          no node handles it (none has a record yet, or its selector matches none)
//   False  NodeSelectorUnreadable  what lies at node_selector_path is no label map: no node acts on it
// "Current state" is the digest of the object's essence (object/essence.h), so a status write,
// or a change under ignored_paths, is not a new state.
// Whether the condition is written: when its status, reason or observedGeneration would change.
// The message alone never starts a write (it would cost a write per node per change); it is
// the one of the last transition.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/base/status.h"
#include "agent/rollout/rules/board_view.h"
#include "agent/rollout/rules/rollout_judge.h"

namespace nodehook {

struct ReadyValue {
  std::string status;  // "True" or "False"
  std::string reason;
  std::string message;
};

// The object's condition of the type as it is (what the writer compares with).
struct KeptCondition {
  std::string status;
  std::string reason;
  std::string message;
  int64_t observed_generation = -1;  // -1: absent
};

inline constexpr size_t kReadyMessageLimit = 1024;

// `object`: its uid, state digest and selector; `unreadable_selector`: why its node selector
// could not be read ("" when it could).
ReadyValue JudgeReady(const BoardView& board, const RolloutObject& object, const std::string& unreadable_selector = "");

bool ReadyNeedsWrite(const std::optional<KeptCondition>& kept, const ReadyValue& wanted, int64_t generation);

// What the writer reads of an object version besides its facts, in one parse: metadata.generation
// (0 when absent) and the condition of `type` in status.conditions (nullopt when absent, and for
// an unreadable status).
struct ObjectReadiness {
  int64_t generation = 0;
  std::optional<KeptCondition> kept;
};
ObjectReadiness ReadReadiness(std::string_view object_json, const std::string& type);

// The merge patch of the status subresource that puts `wanted` in status.conditions: the other
// conditions copied as they are, in their order; lastTransitionTime kept while the status stays
// (`now` otherwise: RFC 3339). Guarded by `resource_version`: a change since then fails it (409).
// kInvalid when status.conditions is there but not a list of objects (nothing is written over it).
Result<std::string> ReadyConditionPatch(std::string_view object_json, const std::string& type,
                                        const ReadyValue& wanted, int64_t generation, const std::string& now,
                                        const std::string& resource_version);

}  // namespace nodehook
