// StateStore: the agent's durable memory on the node. Everything is keyed by object uid and
// this agent's node name (fixed when the store is opened), so nothing is ever written to the
// watched objects. Implementations are thread-safe; each method is one atomic transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

// The last state of an object that this node handled: its diffbase.
struct ObjectRecord {
  std::string uid;
  std::string resource;        // ResourceRef::Id(), e.g. "widgets.example.com/v1"
  std::string namespace_name;
  std::string name;
  std::string essence;         // JSON of the handled essence (spec, labels, annotations minus ignored paths)
  std::string last_object;     // JSON of the whole object as last handled: given to delete hooks
  int64_t handled_at_ms = 0;
};

// Progress of one handler (create, update, delete, resume, event) for one object.
struct HandlerRecord {
  std::string uid;
  std::string handler;
  std::string resource;        // identity, so progress is readable before any diffbase exists
  std::string namespace_name;
  std::string name;
  int retries = 0;               // failed attempts so far
  int64_t first_start_ms = 0;    // when the first attempt for this target started
  int64_t next_attempt_ms = 0;   // not before this time
  std::string last_outcome;      // "failed", "timeout", "in_progress", "retry_later", "permanent_failure"
  std::string last_message;
  std::string target;            // digest of the essence this handler is working towards
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  virtual const std::string& node_name() const = 0;

  virtual Result<std::optional<ObjectRecord>> GetObject(const std::string& uid) = 0;
  virtual Result<std::vector<ObjectRecord>> ListObjects(const std::string& resource) = 0;

  virtual Result<std::optional<HandlerRecord>> GetHandler(const std::string& uid,
                                                          const std::string& handler) = 0;
  virtual Result<std::vector<HandlerRecord>> ListHandlers(const std::string& uid) = 0;
  // Every handler record of this node, for `nodehook state list` and restart scheduling.
  virtual Result<std::vector<HandlerRecord>> ListAllHandlers() = 0;

  // Upserts one handler's progress (a failed or unfinished attempt).
  virtual Status RecordAttempt(const HandlerRecord& record) = 0;

  // A handler completed: stores the new diffbase and drops that handler's progress row,
  // in one transaction, so a restart never re-runs a completed hook.
  virtual Status RecordHandled(const ObjectRecord& object, const std::string& handler) = 0;

  // The object is gone and its delete handling finished: forgets the object and all its handlers.
  virtual Status Forget(const std::string& uid) = 0;
};

}  // namespace nodehook
