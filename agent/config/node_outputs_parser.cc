#include "agent/config/node_outputs_parser.h"

#include <algorithm>

#include "agent/base/kube_names.h"

namespace nodehook {
namespace {

// A NodeCondition type as the node's own conditions are named: CamelCase, optionally behind a
// DNS subdomain and "/" (e.g. "WidgetsReady", "example.com/WidgetsReady"), so it is a label key
// too (the node-bound rules and `kubectl get node -o jsonpath` read it unquoted).
bool IsConditionType(const std::string& type) {
  const std::string name = type.substr(type.find('/') == std::string::npos ? 0 : type.find('/') + 1);
  return IsLabelKey(type) && !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

}  // namespace

const std::vector<std::string>& NodeOutputsKeys() {
  static const std::vector<std::string> keys = {"condition"};
  return keys;
}

const std::vector<std::string>& ReservedNodeConditionTypes() {
  static const std::vector<std::string> types = {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure",
                                                 "NetworkUnavailable"};
  return types;
}

void ReadNodeOutputs(const rapidjson::Value& value, const std::string& path, WatchedResource* out, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, NodeOutputsKeys(), diag);
  const rapidjson::Value* condition = FindMember(value, "condition");
  if (condition == nullptr) {
    diag.Error(path, "expected at least one of: " + JoinNames(NodeOutputsKeys()));
    return;
  }
  const std::string key_path = ChildPath(path, "condition");
  std::string type;
  if (!ReadString(*condition, key_path, true, &type, diag)) return;
  const auto& reserved = ReservedNodeConditionTypes();
  if (!IsConditionType(type)) {
    diag.Error(key_path, "expected a NodeCondition type: letters and digits starting with a letter, optionally "
                         "behind a DNS subdomain and \"/\" (e.g. \"WidgetsReady\"), got \"" + type + "\"");
  } else if (std::find(reserved.begin(), reserved.end(), type) != reserved.end()) {
    diag.Error(key_path, "\"" + type + "\" is the kubelet's own condition; choose another type (e.g. \"" +
                             out->ref.plural + "Ready\")");
  } else {
    out->node_condition = type;
  }
}

}  // namespace nodehook
