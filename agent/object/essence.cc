#include "agent/object/essence.h"

#include "agent/config/config.h"
#include "agent/object/canonical_json.h"
#include "agent/object/json_diff.h"

namespace nodehook {
namespace {

using rapidjson::Document;
using rapidjson::Value;

// Annotations that tools rewrite on their own; a change to them is never the user's intent.
const char* const kAlwaysIgnoredAnnotations[] = {
    "kubectl.kubernetes.io/last-applied-configuration",
    // Steering a rollout is not a change of the object: pausing it must not start a new state.
    kRolloutPausedAnnotation,
    kRolloutResumeAnnotation,
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

bool IsEmptyObject(const Value& v) { return v.IsObject() && v.MemberCount() == 0; }

}  // namespace

Result<std::string> ComputeEssence(const std::string& object_json, const std::vector<std::string>& ignored_paths) {
  Document doc;
  doc.Parse<kExactParseFlags>(object_json.c_str(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("object is not a JSON object");
  return EssenceOfDocument(doc, ignored_paths);
}

std::string EssenceOfDocument(Document& doc, const std::vector<std::string>& ignored_paths) {
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
  return CanonicalJson(doc);
}

namespace {

Result<Document> ParseOrEmpty(const std::string& json, const char* which) {
  Document doc;
  if (json.empty()) {
    doc.SetObject();
    return doc;
  }
  doc.Parse<kExactParseFlags>(json.c_str(), json.size());
  if (doc.HasParseError()) return InvalidError(std::string(which) + " essence is not valid JSON");
  return doc;
}

}  // namespace

Result<std::string> DiffEssences(const std::string& old_essence, const std::string& new_essence) {
  auto old_doc = ParseOrEmpty(old_essence, "old");
  if (!old_doc.ok()) return old_doc.status();
  auto new_doc = ParseOrEmpty(new_essence, "new");
  if (!new_doc.ok()) return new_doc.status();
  return DiffJson(*old_doc, *new_doc);
}

std::string EssenceDigest(const std::string& essence) {
  // FNV-1a 64 (its offset basis short of a digit, kept: stored targets are these digests): a
  // change detector for retries, not a security boundary.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : essence) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return DigestText(h);
}

std::string DigestText(uint64_t value) {
  // Not snprintf: this runs for every object version the watch reads, and printf's parsing of
  // the format was 9 % of the watch thread's CPU.
  static const char kHex[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) text[static_cast<size_t>(i)] = kHex[value & 0xF];
  return text;
}

bool ParseDigest(const std::string& text, uint64_t* value) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return false;
    v = v << 4 | static_cast<uint64_t>(digit);
  }
  *value = v;
  return true;
}

}  // namespace nodehook
