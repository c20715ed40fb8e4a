#include "agent/kube/credentials/kubeconfig_fields.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <regex>

#include "agent/kube/credentials/base64.h"
#include "agent/kube/credentials/file_source.h"

namespace nodehook {
namespace {

bool OneOf(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (text == w) return true;
  }
  return false;
}

// YAML 1.1 spellings, as kubectl's YAML reader (go-yaml v2) resolves unquoted scalars.
bool YamlTrue(const std::string& t) {
  return OneOf(t, {"true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON"});
}
bool YamlFalse(const std::string& t) {
  return OneOf(t, {"false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF"});
}

// A JSON number exactly (YAML numbers JSON cannot spell, like 0x1F or .5, stay strings).
bool IsJsonNumber(const std::string& t) {
  static const std::regex kNumber(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  return std::regex_match(t, kNumber);
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteJson(const YamlNode& node, Writer& w) {
  switch (node.kind) {
    case YamlNode::Kind::kNull:
      w.Null();
      return;
    case YamlNode::Kind::kScalar:
      if (!node.quoted && YamlTrue(node.scalar)) {
        w.Bool(true);
      } else if (!node.quoted && YamlFalse(node.scalar)) {
        w.Bool(false);
      } else if (!node.quoted && IsJsonNumber(node.scalar)) {
        w.RawValue(node.scalar.c_str(), node.scalar.size(), rapidjson::kNumberType);
      } else {
        w.String(node.scalar.c_str(), static_cast<rapidjson::SizeType>(node.scalar.size()));
      }
      return;
    case YamlNode::Kind::kList:
      w.StartArray();
      for (const YamlNode& item : node.items) WriteJson(item, w);
      w.EndArray();
      return;
    case YamlNode::Kind::kMap:
      w.StartObject();
      for (const auto& [key, value] : node.entries) {
        w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
        WriteJson(value, w);
      }
      w.EndObject();
      return;
  }
}

}  // namespace

Status FieldReader::Error(const std::string& key, const std::string& what) const {
  const YamlNode* node = key.empty() ? &map_ : map_.Find(key);
  return KubeconfigError(file_, node ? node : &map_, where_ + (key.empty() ? "" : " key '" + key + "'"), what);
}

Status FieldReader::String(const std::string& key, std::string* out) const {
  const YamlNode* node = map_.Find(key);
  if (!node || node->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (!node->is_scalar()) return Error(key, "expected a string");
  *out = node->scalar;
  return Status::Ok();
}

Status FieldReader::Bool(const std::string& key, bool* out) const {
  const YamlNode* node = map_.Find(key);
  if (!node || node->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (node->is_scalar() && !node->quoted && YamlTrue(node->scalar)) {
    *out = true;
  } else if (node->is_scalar() && !node->quoted && YamlFalse(node->scalar)) {
    *out = false;
  } else {
    return Error(key, "expected true or false (unquoted), got " +
                          (node->is_scalar() ? "'" + node->scalar + "'" : std::string("a collection")));
  }
  return Status::Ok();
}

Status FieldReader::StringList(const std::string& key, std::vector<std::string>* out) const {
  const YamlNode* node = map_.Find(key);
  if (!node || node->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (!node->is_list()) return Error(key, "expected a list of strings");
  for (const YamlNode& item : node->items) {
    if (!item.is_scalar()) return Error(key, "expected a list of strings; item at " + item.Where() + " is not");
    out->push_back(item.scalar);
  }
  return Status::Ok();
}

Status FieldReader::NameValueList(const std::string& key, std::vector<std::pair<std::string, std::string>>* out) const {
  const YamlNode* node = map_.Find(key);
  if (!node || node->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (!node->is_list()) return Error(key, "expected a list of {name, value}");
  for (const YamlNode& item : node->items) {
    const YamlNode* name = item.Find("name");
    const YamlNode* value = item.Find("value");
    bool value_ok = !value || value->is_scalar() || value->kind == YamlNode::Kind::kNull;
    if (!name || !name->is_scalar() || name->scalar.empty() || !value_ok) {
      return Error(key, "expected a list of {name, value}; item at " + item.Where() + " is not");
    }
    out->emplace_back(name->scalar, value ? value->scalar : std::string());
  }
  return Status::Ok();
}

std::string FieldReader::Resolve(const std::string& path) const {
  return std::filesystem::path(path).is_absolute() ? path : file_.dir + "/" + path;
}

Status FieldReader::Pem(const std::string& file_key, std::string* out, std::string* from_file) const {
  std::string data, file;
  std::string data_key = file_key + "-data";
  NODEHOOK_RETURN_IF_ERROR(String(data_key, &data));
  NODEHOOK_RETURN_IF_ERROR(String(file_key, &file));
  if (!data.empty()) {
    auto decoded = Base64Decode(data);
    if (!decoded.ok()) return Error(data_key, decoded.status().message());
    *out = std::move(decoded).value();
  } else if (!file.empty()) {
    auto content = ReadWholeFile(Resolve(file));
    if (!content.ok()) return Error(file_key, content.status().message());
    *out = std::move(content).value();
    if (from_file) *from_file = Resolve(file);
  }
  return Status::Ok();
}

std::string YamlToJson(const YamlNode& node) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  WriteJson(node, w);
  return buffer.GetString();
}

}  // namespace nodehook
