// The RapidJSON chores every writer and reader of Kubernetes JSON here repeats: writing a string
// member, reading one (empty when absent or not a string), finding a member of any type.
// Header-only; thread-safe.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>

namespace nodehook {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void PutString(JsonWriter& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

// `object[key]` when `object` is an object and that member a string; "" otherwise.
inline std::string StringMember(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : std::string();
}

// `&object[key]` when `object` is an object with that member; null otherwise.
inline const rapidjson::Value* MemberOf(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

}  // namespace nodehook
