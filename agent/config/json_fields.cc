#include "agent/config/json_fields.h"

#include <cstdio>

namespace nodehook {

void Diagnostics::Error(const std::string& path, std::string message) {
  ErrorAtLine(path, LineOf(path), std::move(message));
}

void Diagnostics::ErrorAtLine(const std::string& path, int line, std::string message) {
  errors_->push_back(ConfigError{path, line, std::move(message)});
}

const char* JsonTypeName(const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "boolean";
    case rapidjson::kObjectType: return "object";
    case rapidjson::kArrayType: return "array";
    case rapidjson::kStringType: return "string";
    case rapidjson::kNumberType: return "number";
  }
  return "unknown";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

void ReportUnknownKeys(const rapidjson::Value& object, const std::string& path,
                       const std::vector<std::string>& allowed, Diagnostics& diag) {
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    bool known = false;
    for (const std::string& name : allowed) known = known || name == key;
    if (!known) diag.Error(ChildPath(path, key), "unknown key (expected one of: " + JoinNames(allowed) + ")");
  }
}

bool ExpectObject(const rapidjson::Value& value, const std::string& path, Diagnostics& diag) {
  if (value.IsObject()) return true;
  diag.Error(path, std::string("expected an object, got ") + JsonTypeName(value));
  return false;
}

bool ReadString(const rapidjson::Value& value, const std::string& path, bool non_empty, std::string* out,
                Diagnostics& diag) {
  const char* expected = non_empty ? "expected a non-empty string" : "expected a string";
  if (!value.IsString()) {
    diag.Error(path, std::string(expected) + ", got " + JsonTypeName(value));
    return false;
  }
  if (non_empty && value.GetStringLength() == 0) {
    diag.Error(path, std::string(expected) + ", got \"\"");
    return false;
  }
  out->assign(value.GetString(), value.GetStringLength());
  return true;
}

std::string IntegerExpectation(int min, int max) {
  return "expected an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

std::string DescribeNonInt(const rapidjson::Value& value) {
  if (value.IsInt64()) return std::to_string(value.GetInt64());
  if (value.IsUint64()) return std::to_string(value.GetUint64());
  if (!value.IsNumber()) return JsonTypeName(value);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value.GetDouble());
  return buf;
}

bool ReadBool(const rapidjson::Value& value, const std::string& path, bool* out, Diagnostics& diag) {
  if (!value.IsBool()) {
    diag.Error(path, std::string("expected true or false, got ") + JsonTypeName(value));
    return false;
  }
  *out = value.GetBool();
  return true;
}

bool ReadIntInRange(const rapidjson::Value& value, const std::string& path, int min, int max, int* out,
                    Diagnostics& diag) {
  if (!value.IsInt() || value.GetInt() < min || value.GetInt() > max) {
    std::string got = value.IsInt() ? std::to_string(value.GetInt()) : DescribeNonInt(value);
    diag.Error(path, IntegerExpectation(min, max) + ", got " + got);
    return false;
  }
  *out = value.GetInt();
  return true;
}

bool ReadStringList(const rapidjson::Value& value, const std::string& path, bool allow_empty_list,
                    std::vector<std::string>* out, Diagnostics& diag) {
  const char* expected = allow_empty_list ? "expected an array of non-empty strings"
                                          : "expected a non-empty array of non-empty strings";
  if (!value.IsArray() || (!allow_empty_list && value.Empty())) {
    diag.Error(path, std::string(expected) + ", got " + (value.IsArray() ? "[]" : JsonTypeName(value)));
    return false;
  }
  bool ok = true;
  out->clear();
  for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
    std::string item;
    if (ReadString(value[i], ElementPath(path, i), true, &item, diag)) {
      out->push_back(std::move(item));
    } else {
      ok = false;
    }
  }
  return ok;
}

const rapidjson::Value* FindMember(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

}  // namespace nodehook
