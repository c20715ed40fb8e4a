#include "agent/core/essence.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdio>

namespace nodehook {
namespace {

using rapidjson::Document;
using rapidjson::Value;

// Annotations that tools rewrite on their own; a change to them is never the user's intent.
const char* const kAlwaysIgnoredAnnotations[] = {
    "kubectl.kubernetes.io/last-applied-configuration",
};

const char* const kMetadataKept[] = {"labels", "annotations"};

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  parts.push_back(current);
  return parts;
}

// Removes a dotted path. Annotation and label keys may contain dots ("example.com/x"), so once the
// path reaches metadata.annotations or metadata.labels the rest is taken as one key.
void RemovePath(Value& root, const std::string& path) {
  std::vector<std::string> parts = SplitPath(path);
  if (parts.size() > 3 && parts[0] == "metadata" && (parts[1] == "annotations" || parts[1] == "labels")) {
    std::string key = parts[2];
    for (size_t i = 3; i < parts.size(); ++i) key += "." + parts[i];
    parts.resize(2);
    parts.push_back(key);
  }
  Value* node = &root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node->IsObject()) return;
    auto it = node->FindMember(parts[i].c_str());
    if (it == node->MemberEnd()) return;
    node = &it->value;
  }
  if (node->IsObject()) node->RemoveMember(parts.back().c_str());
}

void WriteCanonical(const Value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) members.push_back(&*it);
    std::sort(members.begin(), members.end(), [](const Value::Member* a, const Value::Member* b) {
      return std::string(a->name.GetString(), a->name.GetStringLength()) <
             std::string(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (const auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      WriteCanonical(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) WriteCanonical(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

std::string Canonical(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  WriteCanonical(v, w);
  return std::string(buf.GetString(), buf.GetSize());
}

bool IsEmptyObject(const Value& v) { return v.IsObject() && v.MemberCount() == 0; }

}  // namespace

Result<std::string> ComputeEssence(const std::string& object_json, const std::vector<std::string>& ignored_paths) {
  Document doc;
  doc.Parse(object_json.c_str(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("object is not a JSON object");

  doc.RemoveMember("status");
  doc.RemoveMember("apiVersion");
  doc.RemoveMember("kind");
  auto meta = doc.FindMember("metadata");
  if (meta != doc.MemberEnd() && meta->value.IsObject()) {
    Value kept(rapidjson::kObjectType);
    for (const char* name : kMetadataKept) {
      auto it = meta->value.FindMember(name);
      if (it != meta->value.MemberEnd()) kept.AddMember(Value(name, doc.GetAllocator()), it->value, doc.GetAllocator());
    }
    meta->value = kept;
    auto annotations = meta->value.FindMember("annotations");
    if (annotations != meta->value.MemberEnd() && annotations->value.IsObject()) {
      for (const char* a : kAlwaysIgnoredAnnotations) annotations->value.RemoveMember(a);
    }
  }
  for (const auto& path : ignored_paths) RemovePath(doc, path);
  // Empty label/annotation maps and an empty metadata mean the same as absent ones.
  if (meta != doc.MemberEnd() && meta->value.IsObject()) {
    for (const char* name : kMetadataKept) {
      auto it = meta->value.FindMember(name);
      if (it != meta->value.MemberEnd() && IsEmptyObject(it->value)) meta->value.RemoveMember(name);
    }
    if (IsEmptyObject(meta->value)) doc.RemoveMember("metadata");
  }
  return Canonical(doc);
}

namespace {

void AppendPath(Value& path_array, const std::vector<std::string>& path, rapidjson::Document::AllocatorType& a) {
  for (const auto& p : path) path_array.PushBack(Value(p.c_str(), a), a);
}

void DiffValues(const Value* old_v, const Value* new_v, std::vector<std::string>& path, Value& out,
                rapidjson::Document::AllocatorType& a) {
  if (old_v && new_v && old_v->IsObject() && new_v->IsObject()) {
    for (auto it = old_v->MemberBegin(); it != old_v->MemberEnd(); ++it) {
      path.emplace_back(it->name.GetString(), it->name.GetStringLength());
      auto other = new_v->FindMember(it->name);
      DiffValues(&it->value, other == new_v->MemberEnd() ? nullptr : &other->value, path, out, a);
      path.pop_back();
    }
    for (auto it = new_v->MemberBegin(); it != new_v->MemberEnd(); ++it) {
      if (old_v->HasMember(it->name)) continue;
      path.emplace_back(it->name.GetString(), it->name.GetStringLength());
      DiffValues(nullptr, &it->value, path, out, a);
      path.pop_back();
    }
    return;
  }
  if (old_v && new_v && *old_v == *new_v) return;
  if (!old_v && !new_v) return;
  Value change(rapidjson::kObjectType);
  const char* op = !old_v ? "add" : !new_v ? "remove" : "change";
  change.AddMember("op", Value(op, a), a);
  Value path_array(rapidjson::kArrayType);
  AppendPath(path_array, path, a);
  change.AddMember("path", path_array, a);
  if (old_v) change.AddMember("old", Value(*old_v, a), a);
  if (new_v) change.AddMember("new", Value(*new_v, a), a);
  out.PushBack(change, a);
}

Result<Document> ParseOrEmpty(const std::string& json, const char* which) {
  Document doc;
  if (json.empty()) {
    doc.SetObject();
    return doc;
  }
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError()) return InvalidError(std::string(which) + " essence is not valid JSON");
  return doc;
}

}  // namespace

Result<std::string> DiffEssences(const std::string& old_essence, const std::string& new_essence) {
  auto old_doc = ParseOrEmpty(old_essence, "old");
  if (!old_doc.ok()) return old_doc.status();
  auto new_doc = ParseOrEmpty(new_essence, "new");
  if (!new_doc.ok()) return new_doc.status();
  Document out;
  out.SetArray();
  std::vector<std::string> path;
  DiffValues(&*old_doc, &*new_doc, path, out, out.GetAllocator());
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  out.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string EssenceDigest(const std::string& essence) {
  // FNV-1a 64: a change detector for retries, not a security boundary.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : essence) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace nodehook
