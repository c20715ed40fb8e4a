#include "agent/object/json_diff.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "agent/object/canonical_json.h"

namespace nodehook {
namespace {

using rapidjson::Value;

// One pair of values still to compare. `depth` is the length of its path, `key` the last element.
struct Pending {
  const Value* old_value;  // null: absent on the old side
  const Value* new_value;  // null: absent on the new side
  size_t depth;
  std::string_view key;
};

std::string_view KeyOf(const Value::Member* m) { return {m->name.GetString(), m->name.GetStringLength()}; }

bool Same(const Value& a, const Value& b) {
  bool a_container = a.IsObject() || a.IsArray(), b_container = b.IsObject() || b.IsArray();
  if (!a_container && !b_container) return a == b;  // scalars: no recursion
  if (a.GetType() != b.GetType()) return false;
  return CanonicalJson(a) == CanonicalJson(b);
}

void WriteChange(const Pending& p, const std::vector<std::string_view>& path, JsonWriter& w) {
  w.StartObject();
  w.Key("op");
  w.String(!p.old_value ? "add" : !p.new_value ? "remove" : "change");
  w.Key("path");
  w.StartArray();
  for (std::string_view part : path) w.String(part.data(), static_cast<rapidjson::SizeType>(part.size()));
  w.EndArray();
  if (p.old_value) {
    w.Key("old");
    WriteCanonical(*p.old_value, w);
  }
  if (p.new_value) {
    w.Key("new");
    WriteCanonical(*p.new_value, w);
  }
  w.EndObject();
}

// Pushes the members of two objects, merged by key, so that they pop in key order.
void PushMembers(const Value& old_object, const Value& new_object, size_t depth, std::vector<Pending>& stack) {
  std::vector<const Value::Member*> olds = SortedMembers(old_object), news = SortedMembers(new_object);
  std::vector<Pending> merged;
  merged.reserve(olds.size() + news.size());
  size_t i = 0, j = 0;
  while (i < olds.size() || j < news.size()) {
    int order = i == olds.size() ? 1 : j == news.size() ? -1 : KeyOf(olds[i]).compare(KeyOf(news[j]));
    if (order < 0) {
      merged.push_back({&olds[i]->value, nullptr, depth, KeyOf(olds[i])});
      ++i;
    } else if (order > 0) {
      merged.push_back({nullptr, &news[j]->value, depth, KeyOf(news[j])});
      ++j;
    } else {
      merged.push_back({&olds[i]->value, &news[j]->value, depth, KeyOf(olds[i])});
      ++i, ++j;
    }
  }
  stack.insert(stack.end(), merged.rbegin(), merged.rend());
}

}  // namespace

std::string DiffJson(const Value& old_value, const Value& new_value) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartArray();
  std::vector<std::string_view> path;
  std::vector<Pending> stack{{&old_value, &new_value, 0, {}}};
  while (!stack.empty()) {
    Pending p = stack.back();
    stack.pop_back();
    path.resize(p.depth);
    if (p.depth > 0) path.back() = p.key;
    if (p.old_value && p.new_value && p.old_value->IsObject() && p.new_value->IsObject()) {
      PushMembers(*p.old_value, *p.new_value, p.depth + 1, stack);
    } else if (!p.old_value || !p.new_value || !Same(*p.old_value, *p.new_value)) {
      WriteChange(p, path, writer);
    }
  }
  writer.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace nodehook
