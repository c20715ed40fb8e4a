#include "agent/core/kube_node_targeting.h"

#include <rapidjson/document.h>

#include "agent/base/log.h"

namespace nodehook {
namespace {

// Objects with a bad selector are rare; past this many remembered uids the set starts over, so a
// long-lived agent may repeat a warning but never grows without bound.
constexpr size_t kMaxReportedUids = 10'000;

NodeSelectorLookup Invalid(std::string why) {
  NodeSelectorLookup lookup;
  lookup.kind = NodeSelectorLookup::Kind::kInvalid;
  lookup.why = std::move(why);
  return lookup;
}

}  // namespace

NodeSelectorLookup ReadNodeSelector(const std::string& object_json, const std::string& dotted_path) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(object_json.data(), object_json.size());  // heap, not stack, for nesting
  if (doc.HasParseError() || !doc.IsObject()) return Invalid("the object is not a JSON object");
  const rapidjson::Value* at = &doc;
  size_t start = 0;
  while (start <= dotted_path.size()) {
    size_t dot = dotted_path.find('.', start);
    if (dot == std::string::npos) dot = dotted_path.size();
    std::string key = dotted_path.substr(start, dot - start);
    if (!at->IsObject()) return Invalid("\"" + dotted_path.substr(0, start - 1) + "\" is not an object");
    auto member = at->FindMember(key.c_str());
    if (member == at->MemberEnd()) return NodeSelectorLookup{};
    at = &member->value;
    start = dot + 1;
  }
  if (at->IsNull()) return NodeSelectorLookup{};
  if (!at->IsObject()) return Invalid("expected a map of label names to values, got a non-object");
  NodeSelectorLookup lookup;
  lookup.kind = NodeSelectorLookup::Kind::kSelector;
  for (auto it = at->MemberBegin(); it != at->MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    if (!it->value.IsString()) {
      return Invalid("expected a map of label names to values; \"" + name + "\" is not a string");
    }
    lookup.selector.emplace(std::move(name), std::string(it->value.GetString(), it->value.GetStringLength()));
  }
  return lookup;
}

KubeNodeTargeting::KubeNodeTargeting(const NodeLabels& labels) : labels_(labels) {}

bool KubeNodeTargeting::Matches(const WatchedResource& resource, const KubeObject& object) const {
  if (resource.node_selector_path.empty()) return true;
  NodeSelectorLookup lookup = ReadNodeSelector(object.json, resource.node_selector_path);
  switch (lookup.kind) {
    case NodeSelectorLookup::Kind::kAbsent: return true;
    case NodeSelectorLookup::Kind::kInvalid:
      ReportInvalidOnce(resource, object, lookup.why);
      return false;
    case NodeSelectorLookup::Kind::kSelector:
      return lookup.selector.empty() || labels_.Matches(lookup.selector);
  }
  return false;
}

void KubeNodeTargeting::ReportInvalidOnce(const WatchedResource& resource, const KubeObject& object,
                                          const std::string& why) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reported_uids_.size() >= kMaxReportedUids) reported_uids_.clear();
    if (!reported_uids_.insert(object.meta.uid).second) return;
  }
  Log(LogLevel::kWarn, "node selector unreadable",
      {{"object", object.meta.Key()},
       {"uid", object.meta.uid},
       {"resource", resource.ref.Id()},
       {"path", resource.node_selector_path},
       {"error", why},
       {"next", "this node does not act on the object until its selector is a map of strings"}});
}

}  // namespace nodehook
