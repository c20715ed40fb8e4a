#include "agent/rollout/rules/rollout_cordons.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"
#include "agent/nodework/kube_node_api.h"

namespace nodehook {

ResourceRef CordonedNodesResource() { return ResourceRef{"", "v1", "nodes", "", "", "spec.unschedulable=true"}; }

std::optional<std::string> RolloutCordonOf(const std::string& rid, const std::string& node_json) {
  Result<NodeState> node = ParseNodeState(node_json);
  if (!node.ok() || !node->unschedulable) return std::nullopt;
  const std::string prefix = std::string(kCordonMarkPrefix) + rid + ".";
  std::string objects;
  bool marked = false;
  for (auto mark = node->marks.lower_bound(prefix); mark != node->marks.end(); ++mark) {
    if (mark->first.compare(0, prefix.size(), prefix) != 0) break;
    marked = true;
    rapidjson::Document value;
    value.Parse(mark->second.c_str(), mark->second.size());
    const std::string object = value.IsObject() ? StringMember(value, "object") : "";
    objects += (objects.empty() ? "" : ", ") + (object.empty() ? mark->first : object);
  }
  if (!marked) return std::nullopt;
  return objects;
}

std::map<std::string, std::string> RolloutCordons(const std::string& rid, const std::vector<KubeObject>& nodes) {
  std::map<std::string, std::string> out;
  for (const KubeObject& node : nodes) {
    if (auto objects = RolloutCordonOf(rid, node.json)) out[node.meta.name] = std::move(*objects);
  }
  return out;
}

}  // namespace nodehook
