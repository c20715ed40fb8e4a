// Reads a resource's "node_outputs" block (NodeOutputs in config.h; docs/configuration.md): what
// this resource publishes on the agent's own Node. Internal to agent/config. Stateless.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

// The keys of "node_outputs"; shared with the JSON Schema (config_schema.cc).
const std::vector<std::string>& NodeOutputsKeys();

// The NodeCondition types the kubelet and the node controller own: never a resource's.
const std::vector<std::string>& ReservedNodeConditionTypes();

// Whether one prefix starts with the other: their keys would not be told apart.
bool PrefixesOverlap(const std::string& a, const std::string& b);

// A condition type: letters and digits starting with a letter, optionally behind a DNS subdomain and "/".
bool IsConditionType(const std::string& type);

// "ready_condition": the type of the condition kept on each object of the resource.
void ReadReadyCondition(const rapidjson::Value& value, const std::string& path, WatchedResource* out, Diagnostics& diag);

void ReadNodeOutputs(const rapidjson::Value& value, const std::string& path, WatchedResource* out, Diagnostics& diag);

}  // namespace nodehook
