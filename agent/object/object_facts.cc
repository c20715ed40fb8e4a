#include "agent/object/object_facts.h"

#include <algorithm>
#include <atomic>

#include "agent/object/canonical_json.h"
#include "agent/object/essence.h"

namespace nodehook {
namespace {

std::atomic<uint64_t> facts_reads{0};

using rapidjson::Value;

const Value* Member(const Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

NodeSelectorLookup InvalidSelector(std::string why) {
  NodeSelectorLookup lookup;
  lookup.kind = NodeSelectorLookup::Kind::kInvalid;
  lookup.why = std::move(why);
  return lookup;
}

NodeSelectorLookup ReadSelector(const Value& doc, const std::string& dotted_path) {
  const Value* at = &doc;
  size_t start = 0;
  while (start <= dotted_path.size()) {
    size_t dot = dotted_path.find('.', start);
    if (dot == std::string::npos) dot = dotted_path.size();
    std::string key = dotted_path.substr(start, dot - start);
    if (!at->IsObject()) return InvalidSelector("\"" + dotted_path.substr(0, start - 1) + "\" is not an object");
    auto member = at->FindMember(key.c_str());
    if (member == at->MemberEnd()) return NodeSelectorLookup{};
    at = &member->value;
    start = dot + 1;
  }
  if (at->IsNull()) return NodeSelectorLookup{};
  if (!at->IsObject()) return InvalidSelector("expected a map of label names to values, got a non-object");
  NodeSelectorLookup lookup;
  lookup.kind = NodeSelectorLookup::Kind::kSelector;
  for (auto it = at->MemberBegin(); it != at->MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    if (!it->value.IsString()) {
      return InvalidSelector("expected a map of label names to values; \"" + name + "\" is not a string");
    }
    lookup.selector.emplace(std::move(name), std::string(it->value.GetString(), it->value.GetStringLength()));
  }
  return lookup;
}

Status ReadFinalizerList(const Value* metadata, std::vector<std::string>* out) {
  const Value* list = metadata ? Member(*metadata, "finalizers") : nullptr;
  if (!list || list->IsNull()) return Status::Ok();
  if (!list->IsArray()) return InvalidError("metadata.finalizers: expected an array of strings");
  for (const auto& f : list->GetArray()) {
    if (!f.IsString()) {
      out->clear();
      return InvalidError("metadata.finalizers: expected an array of strings");
    }
    out->emplace_back(f.GetString(), f.GetStringLength());
  }
  return Status::Ok();
}

std::string ReadAnnotation(const Value* metadata, const char* name) {
  const Value* annotations = metadata ? Member(*metadata, "annotations") : nullptr;
  const Value* value = annotations ? Member(*annotations, name) : nullptr;
  if (!value || !value->IsString()) return "";
  return std::string(value->GetString(), value->GetStringLength());
}

bool HasAnnotation(const Value* metadata, const char* name) {
  const Value* annotations = metadata ? Member(*metadata, "annotations") : nullptr;
  return annotations && Member(*annotations, name) != nullptr;
}

}  // namespace

FactsSpec FactsSpecOf(const WatchedResource& resource) {
  return FactsSpec{resource.ignored_paths, resource.node_selector_path};
}

bool ObjectFacts::HasFinalizer(const std::string& name) const {
  return std::find(finalizers.begin(), finalizers.end(), name) != finalizers.end();
}

FactsPtr ReadFacts(std::string_view object_json, const FactsSpec& spec) {
  facts_reads.fetch_add(1, std::memory_order_relaxed);
  auto facts = std::make_shared<ObjectFacts>();
  rapidjson::Document doc;
  doc.Parse<kExactParseFlags>(object_json.data(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    facts->readable = InvalidError("object is not a JSON object");
    facts->finalizers_readable = facts->readable;
    return facts;
  }
  // Read-only facts first: the essence strips the document in place.
  const Value* metadata = Member(doc, "metadata");
  facts->finalizers_readable = ReadFinalizerList(metadata, &facts->finalizers);
  facts->singleton_digest = ReadAnnotation(metadata, kSingletonHandledAnnotation);
  facts->rollout_paused = HasAnnotation(metadata, kRolloutPausedAnnotation);
  facts->rollout_stop_nodes = facts->rollout_paused && ReadAnnotation(metadata, kRolloutPausedAnnotation) == kRolloutStopNodes;
  facts->rollout_resume = ReadAnnotation(metadata, kRolloutResumeAnnotation);
  if (!spec.node_selector_path.empty()) facts->selector = ReadSelector(doc, spec.node_selector_path);
  facts->essence = EssenceOfDocument(doc, spec.ignored_paths);
  facts->digest = EssenceDigest(facts->essence);
  return facts;
}

uint64_t FactsReadCount() { return facts_reads.load(std::memory_order_relaxed); }

}  // namespace nodehook
