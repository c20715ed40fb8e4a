// Reads an agent's GET /v1/objects answer (agent/http/objects_endpoint.h) back into the state
// store's own view types, so the fleet command formats what it learnt like `nodehook state`.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "storage/state_report.h"

namespace nodehook {

struct NodeObjects {
  std::string node;
  int64_t snapshot_at_ms = 0;
  size_t total = 0;        // objects that matched on the agent
  bool truncated = false;  // fewer than `total` were sent
  bool messages_hidden = false;
  std::string node_bound;  // "protected", "unprotected", "unknown"; "" from an agent that does not say
  std::vector<ObjectView> objects;  // diffbase, when set, carries only handled_at_ms
};

// kInvalid naming the first field that is missing or of the wrong type.
Result<NodeObjects> ParseObjectsAnswer(const std::string& json);

}  // namespace nodehook
