// What `nodehook state` shows: each object this node remembers, with its handlers' progress,
// as a table for people or JSON for scripts. Pure functions over StateStore reads; `now_ms` is
// passed in so the output is testable. Thread-safe as the store is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "storage/state_store.h"

namespace nodehook {

// One object: its diffbase (if this node handled it) and its pending handlers.
struct ObjectView {
  std::string uid;
  std::string resource;
  std::string namespace_name;
  std::string name;
  // When this node last handled it (its diffbase's handled_at_ms); nullopt: never handled.
  std::optional<int64_t> handled_at_ms;
  // The diffbase itself, only from reads with its bodies (`nodehook state`): the agent keeps a
  // view of every object in memory, and a record inline would be half of each.
  std::shared_ptr<const ObjectRecord> diffbase;
  std::vector<HandlerRecord> handlers;  // by handler name
  // Its rollout's node steps on this node (cordon, drain, reboot), when under way or kept after a
  // failure; only FindObjectView fills it (`nodehook state show`). A pointer: the agent keeps a
  // view of every object in memory, and an empty record inline would be 40 % of each.
  std::shared_ptr<const NodeStepsRecord> node_steps;
  // Only in the agent's /v1/objects snapshot: the resourceVersion of the latest object state this
  // node reconciled to "nothing left to do" since it started; "" when none.
  std::string settled_resource_version;

  std::string Key() const { return namespace_name.empty() ? name : namespace_name + "/" + name; }
};

// Every object of the store's node: those with a diffbase and those with only progress rows,
// ordered by resource, namespace, name, uid. Without `diffbase_bodies` only when each object was
// handled is read, not its diffbase: a much smaller read, for the agent's /v1/objects snapshot.
Result<std::vector<ObjectView>> CollectObjectViews(StateStore& store, bool diffbase_bodies = true);

// The one object with `uid`, with its node steps; kNotFound when the node remembers nothing
// about it. Without `diffbase_bodies`, the read of the agent's /v1/objects snapshot: no essence
// and last_object, no node steps (as CollectObjectViews).
Result<ObjectView> CollectObjectView(StateStore& store, const std::string& uid, bool diffbase_bodies = true);

// The one object `ref` names: a uid, or else "namespace/name" (a cluster-scoped object's bare
// name). kNotFound when nothing matches; kInvalid listing the candidates (resource and uid) when
// several objects of this node carry that name, e.g. two resources or a deleted and a new object.
Result<ObjectView> FindObjectView(StateStore& store, const std::string& ref);

// When a handler runs next, for people: "" for a permanent failure (nothing is scheduled).
std::string NextAttemptText(const HandlerRecord& handler, int64_t now_ms);

// "now", "in 5s", "3m 20s ago", "in 2h 5m", "1d 3h ago": at most two units, for people.
std::string RelativeTime(int64_t at_ms, int64_t now_ms);

// One row per handler (or one "handled" row for an object with no pending handler):
// RESOURCE OBJECT UID HANDLER OUTCOME RETRIES NEXT ATTEMPT MESSAGE. Long messages are shortened.
std::string FormatObjectTable(const std::vector<ObjectView>& objects, int64_t now_ms);

// `state show`: every field of one object, the diffbase's essence included.
std::string FormatObjectDetail(const ObjectView& object, int64_t now_ms);

// A JSON array of objects (list) or one object (show); times as epoch ms plus a relative text
// (next_attempt_ms is null, its relative text "", for a permanent failure).
std::string ObjectsToJson(const std::vector<ObjectView>& objects, int64_t now_ms, bool with_diffbase);
std::string ObjectToJson(const ObjectView& object, int64_t now_ms);

}  // namespace nodehook
