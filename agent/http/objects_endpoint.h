// GET /v1/objects: this node's view of the objects it knows, read-only, for `kubectl nodehook`
// (through the API server's pod proxy) and for people with curl.
//
//   GET /v1/objects[?limit=N][&failing=true][&uid=UID][&namespace=NS][&name=NAME]
//   GET /v1/objects/NAMESPACE/NAME   (GET /v1/objects/NAME for a cluster-scoped object)
//
// Answers JSON: {"node", "snapshot_at_ms", "snapshot_age_ms", "messages": "shown"|"hidden",
// "total" (matching objects), "truncated" (more matched than were returned), "objects": [...]}
// with each object as `nodehook state list --json` prints it (identity, handled time, handlers
// with outcome, retries, next attempt, first start, last message); never the diffbase itself.
// `failing=true` keeps only handlers that failed (failed, retry_later, permanent_failure, or
// running again after failures) and the objects that have one.
//
// The HTTP thread never reads the state store: answers come from `source`, a snapshot the
// agent's housekeeping thread refreshes (ObjectViewsPublisher). No snapshot yet: 503.
// Bounds: at most `max_limit` objects per answer (default `default_limit`), each message cut
// to `message_bytes`. `source` must be quick and thread-safe; `clock` must outlive the server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/compact_uid.h"
#include "agent/base/interned.h"
#include "agent/base/status.h"
#include "agent/http/local_server.h"
#include "storage/state_report.h"

namespace nodehook {

struct SnapshotObject;

// A handler's progress as a snapshot keeps it: a HandlerRecord without the object's identity
// (its SnapshotObject holds that once) and without last_object, the handler's name and outcome
// interned. A node keeps one per handler of every object it remembers: 128 bytes, where a
// HandlerRecord took 320 plus its copies of the uid and names.
struct SnapshotHandler {
  std::string_view handler;       // interned
  std::string_view last_outcome;  // interned: a StoredOutcomeName
  int retries = 0;
  int64_t first_start_ms = 0;
  int64_t next_attempt_ms = 0;
  std::string last_message;
  std::string target;

  static SnapshotHandler Of(HandlerRecord record);
  // The record it stands for, with `identity`'s uid, resource and names.
  HandlerRecord Record(const SnapshotObject& identity) const;
};
std::vector<SnapshotHandler> SnapshotHandlers(std::vector<HandlerRecord> records);

// One object as the node knew it at one moment: an ObjectView without what only `nodehook
// state` reads (the diffbase, node steps, handlers' last_object). The agent keeps one per object
// it remembers, so it is small (96 bytes, 112 with its shared_ptr's count): the resource id is
// interned, namespace and name are one text, and the settled resourceVersion is looked up when
// served (ObjectViewsSnapshot::settled_version).
struct SnapshotObject {
  CompactUid uid;
  InternedText resource;
  // "namespace/name", or "name" for a cluster-scoped object (Kubernetes names hold no '/').
  std::string key;
  int64_t handled_at_ms = -1;  // when this node last handled it; -1: never
  std::vector<SnapshotHandler> handlers;  // by handler name

  static std::string KeyOf(std::string_view namespace_name, std::string_view name);
  std::string_view namespace_name() const;
  std::string_view name() const;
  const std::string& Key() const { return key; }
};
// The ObjectView it stands for (no settled version: see ObjectViewsSnapshot::settled_version).
ObjectView AsObjectView(const SnapshotObject& object);

// Shared between snapshots: a refresh reads only the objects that changed and keeps the rest.
using SharedSnapshotObject = std::shared_ptr<const SnapshotObject>;

struct ObjectViewsSnapshot {
  std::string node;
  TimePoint taken_at;
  std::vector<SharedSnapshotObject> objects;  // ordered by resource, namespace, name, uid
  // Whether the node-bound rules confine this agent (admission/node_bound_check.h):
  // "protected", "unprotected", "unknown"; "" = not said.
  std::string node_bound;
  // The resourceVersion the node settled each object at (ObjectView::settled_resource_version),
  // read when an object is served; none or "": not settled.
  std::function<std::string(std::string_view resource, const std::string& uid)> settled_version;
};
using ObjectViewsPtr = std::shared_ptr<const ObjectViewsSnapshot>;

// kUnavailable (with the reason) while there is no snapshot to serve.
using ObjectViewsSource = std::function<Result<ObjectViewsPtr>()>;

struct ObjectsEndpointOptions {
  bool show_messages = true;  // false: last messages (hook output) are left out
  size_t default_limit = 500;
  size_t max_limit = 5000;
  size_t message_bytes = 1024;
};

void RegisterObjectsEndpoints(LocalServer& server, ObjectViewsSource source, Clock& clock,
                              ObjectsEndpointOptions options);

// A handler that has failed and is not (yet) done: what `kubectl nodehook failing` lists.
bool IsFailing(const HandlerRecord& handler);
bool IsFailing(const SnapshotHandler& handler);

}  // namespace nodehook
