#include "agent/outputs/node_view.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/json_text.h"

namespace nodehook {
namespace {

void ReadStrings(const rapidjson::Value* v, std::map<std::string, std::string>* out) {
  if (v == nullptr || !v->IsObject()) return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (it->value.IsString()) (*out)[it->name.GetString()] = it->value.GetString();
  }
}

// The keys "f:<key>" of a fieldsV1 map, without "f:".
void ReadFieldKeys(const rapidjson::Value* v, std::set<std::string>* out) {
  if (v == nullptr || !v->IsObject()) return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    if (key.rfind("f:", 0) == 0) out->insert(key.substr(2));
  }
}

// The condition types of `k:{"type":"X"}` keys of status.conditions in a fieldsV1 map.
void ReadConditionKeys(const rapidjson::Value* v, std::set<std::string>* out) {
  if (v == nullptr || !v->IsObject()) return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    if (key.rfind("k:", 0) != 0) continue;
    rapidjson::Document k;
    k.Parse(key.c_str() + 2, key.size() - 2);
    const std::string type = StringMember(k, "type");
    if (!type.empty()) out->insert(type);
  }
}

}  // namespace

Result<NodeView> ReadNodeView(const std::string& node_json) {
  rapidjson::Document doc;
  doc.Parse(node_json.c_str(), node_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("the Node is not a JSON object");
  NodeView view;
  const rapidjson::Value* metadata = MemberOf(doc, "metadata");
  if (metadata != nullptr) {
    view.resource_version = StringMember(*metadata, "resourceVersion");
    ReadStrings(MemberOf(*metadata, "labels"), &view.labels);
    ReadStrings(MemberOf(*metadata, "annotations"), &view.annotations);
    const rapidjson::Value* fields = MemberOf(*metadata, "managedFields");
    if (fields != nullptr && fields->IsArray()) {
      for (const auto& f : fields->GetArray()) {
        if (StringMember(f, "operation") != "Apply") continue;
        AppliedFields& applied = view.applied[StringMember(f, "manager")];
        const rapidjson::Value* v1 = MemberOf(f, "fieldsV1");
        if (StringMember(f, "subresource") == "status") {
          applied.status = true;
          const rapidjson::Value* st = v1 ? MemberOf(*v1, "f:status") : nullptr;
          ReadConditionKeys(st ? MemberOf(*st, "f:conditions") : nullptr, &applied.conditions);
        } else if (StringMember(f, "subresource").empty()) {
          applied.metadata = true;
          const rapidjson::Value* meta = v1 ? MemberOf(*v1, "f:metadata") : nullptr;
          ReadFieldKeys(meta ? MemberOf(*meta, "f:labels") : nullptr, &applied.labels);
          ReadFieldKeys(meta ? MemberOf(*meta, "f:annotations") : nullptr, &applied.annotations);
        }
      }
    }
  }
  const rapidjson::Value* spec = MemberOf(doc, "spec");
  const rapidjson::Value* taints = spec ? MemberOf(*spec, "taints") : nullptr;
  if (taints != nullptr && taints->IsArray()) {
    for (const auto& t : taints->GetArray()) {
      view.taints.emplace_back(OutputTaint{StringMember(t, "key"), StringMember(t, "value"), StringMember(t, "effect")});
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
      t.Accept(w);
      view.taints_json.emplace_back(buffer.GetString());
    }
  }
  const rapidjson::Value* status = MemberOf(doc, "status");
  const rapidjson::Value* conditions = status ? MemberOf(*status, "conditions") : nullptr;
  if (conditions != nullptr && conditions->IsArray()) {
    for (const auto& c : conditions->GetArray()) {
      const std::string type = StringMember(c, "type");
      view.conditions[type] = NodeConditionOnNode{
          OutputCondition{type, StringMember(c, "status"), StringMember(c, "reason"), StringMember(c, "message")},
          StringMember(c, "lastTransitionTime")};
    }
  }
  return view;
}

}  // namespace nodehook
