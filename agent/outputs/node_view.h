// NodeView: what the outputs writer needs to know of its Node, read from the Node's JSON: its
// conditions, labels, annotations and taints, its resourceVersion, and for each field manager
// which labels, annotations and condition types it applied (metadata.managedFields). Read once
// at the writer's start (so a restart with nothing changed writes nothing) and before each taint
// write (taints are one atomic list: replaced whole, under the resourceVersion read).
// Pure; thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {

struct NodeConditionOnNode {
  OutputCondition condition;
  std::string last_transition_time;
};

// What one field manager applied, by server-side apply.
struct AppliedFields {
  std::set<std::string> labels;
  std::set<std::string> annotations;
  std::set<std::string> conditions;  // types, applied to the status subresource
  bool metadata = false;             // it applied the Node itself (not only its status)
  bool status = false;               // it applied the status subresource
};

struct NodeView {
  std::string resource_version;
  std::map<std::string, NodeConditionOnNode> conditions;  // by type
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OutputTaint> taints;
  std::vector<std::string> taints_json;  // each taint as the Node holds it (timeAdded and all)
  std::map<std::string, AppliedFields> applied;  // by field manager (Apply operations only)
};

Result<NodeView> ReadNodeView(const std::string& node_json);

}  // namespace nodehook
