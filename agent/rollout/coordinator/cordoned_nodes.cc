#include "agent/rollout/cordoned_nodes.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"
#include "agent/config/config.h"
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

void CordonedNodes::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& /*quarantined*/) {
  std::map<std::string, std::string> nodes;
  for (const ObjectPtr& item : items) {
    if (auto objects = RolloutCordonOf(rid_, item->json)) nodes[item->meta.name] = std::move(*objects);
  }
  MutexLock lock(&mu_);
  nodes_ = std::move(nodes);
  listed_ = true;
}

void CordonedNodes::OnObject(ObjectPtr object) {
  std::optional<std::string> objects = RolloutCordonOf(rid_, object->json);
  MutexLock lock(&mu_);
  if (objects) {
    nodes_[object->meta.name] = std::move(*objects);
  } else {
    nodes_.erase(object->meta.name);
  }
}

void CordonedNodes::OnDeleted(ObjectPtr last_state) {
  MutexLock lock(&mu_);
  nodes_.erase(last_state->meta.name);
}

bool CordonedNodes::listed() const {
  MutexLock lock(&mu_);
  return listed_;
}

std::map<std::string, std::string> CordonedNodes::Nodes() const {
  MutexLock lock(&mu_);
  return nodes_;
}

}  // namespace nodehook
