#include "agent/readiness/ready_objects.h"

#include "agent/object/object_facts.h"

namespace nodehook {
ReadyObjectView ReadyObjects::Read(ObjectPtr object) const {
  ReadyObjectView view;
  view.object = object;
  FactsPtr facts = ReadFacts(object->json, FactsSpecOf(resource_));
  view.readable = facts && facts->readable.ok();
  view.target.uid = object->meta.uid;
  if (view.readable) {
    view.target.state = facts->digest;
    view.target.selector = RolloutSelector(facts->selector);
    if (facts->selector.kind == NodeSelectorLookup::Kind::kInvalid) view.unreadable_selector = facts->selector.why;
  }
  ObjectReadiness readiness = ReadReadiness(object->json, resource_.ready_condition);
  view.generation = readiness.generation;
  view.kept = std::move(readiness.kept);
  return view;
}

void ReadyObjects::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>&) {
  std::map<std::string, ReadyObjectView> fresh;
  for (const ObjectPtr& item : items) fresh[item->meta.uid] = Read(item);
  {
    MutexLock lock(&mu_);
    objects_ = std::move(fresh);
    listed_ = true;
  }
  if (on_change_) on_change_();
}

void ReadyObjects::OnObject(ObjectPtr object) {
  ReadyObjectView view = Read(object);
  {
    MutexLock lock(&mu_);
    objects_[object->meta.uid] = std::move(view);
  }
  if (on_change_) on_change_();
}

void ReadyObjects::OnDeleted(ObjectPtr last_state) {
  {
    MutexLock lock(&mu_);
    objects_.erase(last_state->meta.uid);
  }
  if (on_change_) on_change_();
}

bool ReadyObjects::listed() const {
  MutexLock lock(&mu_);
  return listed_;
}

std::vector<ReadyObjectView> ReadyObjects::Snapshot() const {
  MutexLock lock(&mu_);
  std::vector<ReadyObjectView> out;
  out.reserve(objects_.size());
  for (const auto& [uid, view] : objects_) out.push_back(view);
  return out;
}

}  // namespace nodehook
