#include "agent/rollout/coordinator/cordoned_nodes.h"

#include "agent/rollout/rules/rollout_cordons.h"

namespace nodehook {

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
