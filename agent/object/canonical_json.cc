#include "agent/object/canonical_json.h"

#include <algorithm>
#include <cstring>

namespace nodehook {
namespace {

using rapidjson::Value;

bool KeyLess(const Value::Member* a, const Value::Member* b) {
  size_t la = a->name.GetStringLength(), lb = b->name.GetStringLength();
  int c = std::memcmp(a->name.GetString(), b->name.GetString(), std::min(la, lb));
  return c != 0 ? c < 0 : la < lb;
}

// One open object or array on the explicit stack.
struct Frame {
  const Value* container;
  std::vector<const Value::Member*> members;  // objects only, sorted
  size_t next = 0;
};

}  // namespace

std::vector<const Value::Member*> SortedMembers(const Value& object) {
  std::vector<const Value::Member*> members;
  members.reserve(object.MemberCount());
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) members.push_back(&*it);
  std::sort(members.begin(), members.end(), KeyLess);
  return members;
}

void WriteCanonical(const Value& value, JsonWriter& writer) {
  std::vector<Frame> stack;
  auto open = [&](const Value& v) {
    if (v.IsObject()) {
      writer.StartObject();
      stack.push_back(Frame{&v, SortedMembers(v)});
    } else if (v.IsArray()) {
      writer.StartArray();
      stack.push_back(Frame{&v, {}});
    } else {
      v.Accept(writer);  // a scalar: no recursion
    }
  };
  open(value);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.container->IsObject()) {
      if (top.next == top.members.size()) {
        writer.EndObject();
        stack.pop_back();
        continue;
      }
      const Value::Member* m = top.members[top.next++];
      writer.Key(m->name.GetString(), m->name.GetStringLength());
      open(m->value);  // may grow the stack: `top` is not used after this
    } else {
      if (top.next == top.container->Size()) {
        writer.EndArray();
        stack.pop_back();
        continue;
      }
      open((*top.container)[static_cast<rapidjson::SizeType>(top.next++)]);
    }
  }
}

std::string CanonicalJson(const Value& value) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteCanonical(value, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace nodehook
