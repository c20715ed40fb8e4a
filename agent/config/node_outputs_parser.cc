#include "agent/config/node_outputs_parser.h"

#include <algorithm>

#include "agent/base/kube_names.h"

namespace nodehook {
namespace {


// The Kubernetes project's own domains: node-restriction.kubernetes.io and the like are the
// kubelet's or the cluster's, never a hook's.
bool IsKubernetesDomain(const std::string& domain) {
  for (const std::string reserved : {"kubernetes.io", "k8s.io"}) {
    if (domain == reserved) return true;
    if (domain.size() > reserved.size() && domain.compare(domain.size() - reserved.size(), reserved.size(), reserved) == 0 &&
        domain[domain.size() - reserved.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

// "" when `prefix` can start the keys of a hook's node outputs, else what is wrong.
std::string PrefixProblem(const std::string& prefix) {
  const auto slash = prefix.find('/');
  if (slash == std::string::npos) {
    return "expected a DNS subdomain and \"/\", optionally followed by the start of a name (e.g. "
           "\"widgets.example.com/\"), got \"" + prefix + "\"";
  }
  const std::string domain = prefix.substr(0, slash), rest = prefix.substr(slash + 1);
  if (!IsDnsSubdomain(domain)) return "\"" + domain + "\" is not a DNS subdomain (lower case, e.g. example.com)";
  if (IsKubernetesDomain(domain)) return "\"" + domain + "\" belongs to Kubernetes itself; use a domain of your own";
  // What follows the "/" must be able to start a name part (a name part is alphanumeric at both ends).
  if (!rest.empty() && (rest.size() > 62 || !IsQualifiedNamePart(rest + "a"))) {
    return "after \"/\" expected the start of a name (letters, digits, '-', '_', '.', at most 62), got \"" + rest +
           "\"";
  }
  return "";
}

void ReadPrefixes(const rapidjson::Value& value, const std::string& path, WatchedResource* out, Diagnostics& diag) {
  std::vector<std::string> prefixes;
  if (!ReadStringList(value, path, false, &prefixes, diag)) return;
  for (size_t i = 0; i < prefixes.size(); ++i) {
    const std::string problem = PrefixProblem(prefixes[i]);
    if (!problem.empty()) {
      diag.Error(ElementPath(path, i), problem);
      continue;
    }
    for (size_t j = 0; j < i; ++j) {
      if (PrefixesOverlap(prefixes[i], prefixes[j])) {
        diag.Error(ElementPath(path, i), "overlaps \"" + prefixes[j] + "\" (one starts with the other)");
      }
    }
  }
  out->node_output_prefixes = std::move(prefixes);
}

}  // namespace

// A NodeCondition type as the node's own conditions are named: CamelCase, optionally behind a
// DNS subdomain and "/" (e.g. "WidgetsReady", "example.com/WidgetsReady"), so it is a label key
// too (the node-bound rules and `kubectl get node -o jsonpath` read it unquoted).
bool IsConditionType(const std::string& type) {
  const std::string name = type.substr(type.find('/') == std::string::npos ? 0 : type.find('/') + 1);
  return IsLabelKey(type) && !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

bool PrefixesOverlap(const std::string& a, const std::string& b) {
  return a.compare(0, b.size(), b) == 0 || b.compare(0, a.size(), a) == 0;
}

const std::vector<std::string>& NodeOutputsKeys() {
  static const std::vector<std::string> keys = {"condition", "prefixes"};
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
  const rapidjson::Value* prefixes = FindMember(value, "prefixes");
  if (condition == nullptr && prefixes == nullptr) {
    diag.Error(path, "expected at least one of: " + JoinNames(NodeOutputsKeys()));
    return;
  }
  if (prefixes != nullptr) ReadPrefixes(*prefixes, ChildPath(path, "prefixes"), out, diag);
  if (condition == nullptr) return;
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

void ReadReadyCondition(const rapidjson::Value& value, const std::string& path, WatchedResource* out,
                        Diagnostics& diag) {
  std::string type;
  if (!ReadString(value, path, true, &type, diag)) return;
  if (!IsConditionType(type)) {
    diag.Error(path, "expected a condition type: letters and digits starting with a letter, optionally behind a "
                     "DNS subdomain and \"/\" (e.g. \"Ready\"), got \"" + type + "\"");
    return;
  }
  if (out->ref.group.empty()) {
    diag.Error(path, "a condition on each object needs a custom resource (a CRD with a status subresource); " +
                         out->ref.plural + " is in the core group");
    return;
  }
  out->ready_condition = type;
}

}  // namespace nodehook
