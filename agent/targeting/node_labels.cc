#include "agent/targeting/node_labels.h"

#include <rapidjson/document.h>

#include <utility>

#include "agent/base/log.h"

namespace nodehook {

void NodeLabels::SetOnChange(std::function<void(uint64_t version)> on_change) {
  MutexLock lock(&mu_);
  on_change_ = std::move(on_change);
}

void NodeLabels::Set(LabelMap labels, std::string uid) {
  std::function<void()> notify;
  {
    MutexLock lock(&mu_);
    uid_ = std::move(uid);
    seen_ = true;
    if (labels_ && *labels_ == labels) return;
    labels_ = std::move(labels);
    notify = ChangedLocked();
  }
  notify();
}

void NodeLabels::Clear() {
  std::function<void()> notify;
  {
    MutexLock lock(&mu_);
    uid_.clear();
    if (!labels_) return;
    labels_.reset();
    notify = ChangedLocked();
  }
  notify();
}

std::function<void()> NodeLabels::ChangedLocked() {
  uint64_t version = ++version_;
  auto on_change = on_change_;
  return [on_change, version] {
    if (on_change) on_change(version);
  };
}

std::optional<LabelMap> NodeLabels::Get() const {
  MutexLock lock(&mu_);
  return labels_;
}

NodeIdentity NodeLabels::Identity() const {
  MutexLock lock(&mu_);
  return NodeIdentity{uid_, seen_ && !labels_};
}

uint64_t NodeLabels::version() const {
  MutexLock lock(&mu_);
  return version_;
}

bool NodeLabels::Matches(const LabelMap& selector) const {
  MutexLock lock(&mu_);
  if (!labels_) return false;
  for (const auto& [key, value] : selector) {
    auto it = labels_->find(key);
    if (it == labels_->end() || it->second != value) return false;
  }
  return true;
}

Result<LabelMap> ParseObjectLabels(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());  // heap, not stack, for nesting
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("object is not a JSON object");
  LabelMap labels;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return labels;
  auto found = meta->value.FindMember("labels");
  if (found == meta->value.MemberEnd() || found->value.IsNull()) return labels;
  if (!found->value.IsObject()) return InvalidError("metadata.labels is not a map");
  for (auto it = found->value.MemberBegin(); it != found->value.MemberEnd(); ++it) {
    if (!it->value.IsString()) return InvalidError("metadata.labels has a value that is not a string");
    labels.emplace(std::string(it->name.GetString(), it->name.GetStringLength()),
                   std::string(it->value.GetString(), it->value.GetStringLength()));
  }
  return labels;
}

NodeLabelsSink::NodeLabelsSink(std::string node_name, NodeLabels& labels)
    : node_name_(std::move(node_name)), labels_(labels) {}

void NodeLabelsSink::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) {
  for (const ObjectPtr& item : items) {
    if (item && item->meta.name == node_name_) return Update(*item);
  }
  for (const BadObject& bad : quarantined) {
    if (bad.meta.name == node_name_ || bad.meta.name.empty()) return OnQuarantined(bad, WatchEventType::kAdded);
  }
  Forget("not in the list of nodes");
}

void NodeLabelsSink::OnQuarantined(const BadObject& bad, WatchEventType type) {
  if (!bad.meta.name.empty() && bad.meta.name != node_name_) return;
  Log(LogLevel::kWarn, "object quarantined",
      {{"object", node_name_}, {"uid", bad.meta.uid}, {"resource", "nodes/v1"}, {"event", WatchEventTypeName(type)},
       {"reason", bad.reason}, {"error", bad.message}, {"next", "keep this node's previous labels"}});
}

void NodeLabelsSink::OnObject(ObjectPtr object) {
  if (object && object->meta.name == node_name_) Update(*object);
}

void NodeLabelsSink::OnDeleted(ObjectPtr last_state) {
  if (last_state && last_state->meta.name == node_name_) Forget("deleted");
}

void NodeLabelsSink::Update(const KubeObject& node) {
  auto labels = ParseObjectLabels(node.json);
  if (!labels.ok()) {
    // The API server does not send such a Node; keep what we had rather than guess.
    Log(LogLevel::kWarn, "node labels unreadable",
        {{"node", node_name_}, {"error", labels.status().message()}, {"next", "keep the previous labels"}});
    return;
  }
  missing_reported_ = false;
  uint64_t before = labels_.version();
  size_t count = labels->size();
  labels_.Set(std::move(labels).value(), node.meta.uid);
  if (labels_.version() != before) {
    Log(LogLevel::kInfo, "node labels changed",
        {{"node", node_name_}, {"labels", count}, {"next", "re-check node selectors"}});
  }
}

void NodeLabelsSink::Forget(const char* why) {
  bool was_known = labels_.Get().has_value();
  labels_.Clear();
  if (!was_known && missing_reported_) return;
  missing_reported_ = true;
  Log(LogLevel::kWarn, "node labels unknown",
      {{"node", node_name_}, {"why", why}, {"next", "objects with a node selector do not target this node"}});
}

}  // namespace nodehook
