#include "agent/kube/object_json.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <utility>

namespace nodehook {
namespace {

using rapidjson::Document;
using rapidjson::Value;

Status FieldError(std::string_view what, std::string_view field, std::string_view expected) {
  return InvalidError(std::string(what) + ": field '" + std::string(field) + "': expected " +
                      std::string(expected));
}

// Kubernetes itself refuses JSON nested deeper than this; the limit also keeps the
// recursive serializer below far away from the end of the stack.
constexpr int kMaxNestingDepth = 10000;

// Deepest bracket nesting outside of strings. Only called on text RapidJSON accepted.
int NestingDepth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) max_depth = depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max_depth;
}

Status ParseDocument(std::string_view what, std::string_view text, Document* doc) {
  // The iterative parser uses the heap, not the stack, for nesting.
  doc->Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc->HasParseError()) {
    return InvalidError(std::string(what) + ": malformed JSON at offset " +
                        std::to_string(doc->GetErrorOffset()) + ": " +
                        rapidjson::GetParseError_En(doc->GetParseError()));
  }
  if (!doc->IsObject()) return InvalidError(std::string(what) + ": expected a JSON object");
  if (NestingDepth(text) > kMaxNestingDepth) {
    return InvalidError(std::string(what) + ": JSON nested deeper than " +
                        std::to_string(kMaxNestingDepth) + " levels");
  }
  return Status::Ok();
}

// Reads an optional string member: absent or null leaves *out unchanged.
Status OptionalString(std::string_view what, const Value& parent, const char* key,
                      std::string_view field, std::string* out) {
  auto it = parent.FindMember(key);
  if (it == parent.MemberEnd() || it->value.IsNull()) return Status::Ok();
  if (!it->value.IsString()) return FieldError(what, field, "a string");
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return Status::Ok();
}

Status RequiredString(std::string_view what, const Value& parent, const char* key,
                      std::string_view field, std::string* out) {
  auto it = parent.FindMember(key);
  if (it == parent.MemberEnd() || !it->value.IsString() || it->value.GetStringLength() == 0) {
    return FieldError(what, field, "a non-empty string");
  }
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return Status::Ok();
}

// Fills meta from value.metadata. A bookmark carries only resourceVersion, so name and uid
// are required only for full objects.
Status ReadMeta(std::string_view what, const Value& object, bool full_object, ObjectMeta* meta) {
  if (!object.IsObject()) return FieldError(what, "object", "a JSON object");
  auto md = object.FindMember("metadata");
  if (md == object.MemberEnd() || !md->value.IsObject()) {
    return FieldError(what, "metadata", "a JSON object");
  }
  const Value& m = md->value;
  if (full_object) {
    NODEHOOK_RETURN_IF_ERROR(RequiredString(what, m, "name", "metadata.name", &meta->name));
    NODEHOOK_RETURN_IF_ERROR(RequiredString(what, m, "uid", "metadata.uid", &meta->uid));
  }
  NODEHOOK_RETURN_IF_ERROR(
      OptionalString(what, m, "namespace", "metadata.namespace", &meta->namespace_name));
  NODEHOOK_RETURN_IF_ERROR(
      OptionalString(what, m, "resourceVersion", "metadata.resourceVersion", &meta->resource_version));
  auto ts = m.FindMember("deletionTimestamp");
  meta->deleting = ts != m.MemberEnd() && !ts->value.IsNull();
  return Status::Ok();
}

std::string Serialize(const Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

Status ReadApiStatus(std::string_view what, const Value& v, ApiStatus* out) {
  if (!v.IsObject()) return FieldError(what, "object", "a Status object");
  auto code = v.FindMember("code");
  if (code != v.MemberEnd()) {
    if (!code->value.IsInt()) return FieldError(what, "code", "an integer");
    out->code = code->value.GetInt();
  }
  NODEHOOK_RETURN_IF_ERROR(OptionalString(what, v, "reason", "reason", &out->reason));
  return OptionalString(what, v, "message", "message", &out->message);
}

bool ParseEventType(std::string_view name, WatchEventType* type) {
  static const std::pair<const char*, WatchEventType> kTypes[] = {
      {"ADDED", WatchEventType::kAdded},       {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted},   {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError},
  };
  for (const auto& [text, value] : kTypes) {
    if (name == text) {
      *type = value;
      return true;
    }
  }
  return false;
}

}  // namespace

Result<KubeObject> ParseObject(std::string_view json) {
  Document doc;
  NODEHOOK_RETURN_IF_ERROR(ParseDocument("object", json, &doc));
  KubeObject obj;
  NODEHOOK_RETURN_IF_ERROR(ReadMeta("object", doc, /*full_object=*/true, &obj.meta));
  obj.json.assign(json.data(), json.size());
  return obj;
}

Result<ObjectList> ParseObjectList(std::string_view json) {
  constexpr std::string_view kWhat = "list";
  Document doc;
  NODEHOOK_RETURN_IF_ERROR(ParseDocument(kWhat, json, &doc));
  ObjectList list;
  auto md = doc.FindMember("metadata");
  if (md == doc.MemberEnd() || !md->value.IsObject()) {
    return FieldError(kWhat, "metadata", "a JSON object");
  }
  NODEHOOK_RETURN_IF_ERROR(OptionalString(kWhat, md->value, "resourceVersion",
                                          "metadata.resourceVersion", &list.resource_version));
  NODEHOOK_RETURN_IF_ERROR(
      OptionalString(kWhat, md->value, "continue", "metadata.continue", &list.continue_token));

  // Items inherit kind/apiVersion from the list when the server left them out.
  std::string list_kind, api_version;
  NODEHOOK_RETURN_IF_ERROR(OptionalString(kWhat, doc, "kind", "kind", &list_kind));
  NODEHOOK_RETURN_IF_ERROR(OptionalString(kWhat, doc, "apiVersion", "apiVersion", &api_version));
  constexpr std::string_view kListSuffix = "List";
  std::string item_kind;
  if (list_kind.size() > kListSuffix.size() &&
      list_kind.compare(list_kind.size() - kListSuffix.size(), kListSuffix.size(), kListSuffix) == 0) {
    item_kind = list_kind.substr(0, list_kind.size() - kListSuffix.size());
  }

  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd() || items->value.IsNull()) return list;  // empty lists may send null
  if (!items->value.IsArray()) return FieldError(kWhat, "items", "an array");
  auto& alloc = doc.GetAllocator();
  for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
    Value& item = items->value[i];
    std::string what = "list item " + std::to_string(i);
    KubeObject obj;
    NODEHOOK_RETURN_IF_ERROR(ReadMeta(what, item, /*full_object=*/true, &obj.meta));
    if (!item_kind.empty() && !item.HasMember("kind")) {
      item.AddMember("kind", Value(item_kind.c_str(), alloc), alloc);
    }
    if (!api_version.empty() && !item.HasMember("apiVersion")) {
      item.AddMember("apiVersion", Value(api_version.c_str(), alloc), alloc);
    }
    obj.json = Serialize(item);
    list.items.push_back(std::move(obj));
  }
  return list;
}

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  constexpr std::string_view kWhat = "watch event";
  Document doc;
  NODEHOOK_RETURN_IF_ERROR(ParseDocument(kWhat, line, &doc));
  WatchEvent event;
  std::string type_name;
  NODEHOOK_RETURN_IF_ERROR(RequiredString(kWhat, doc, "type", "type", &type_name));
  if (!ParseEventType(type_name, &event.type)) {
    return FieldError(kWhat, "type", "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, got '" +
                                         type_name + "'");
  }
  auto object = doc.FindMember("object");
  if (object == doc.MemberEnd() || !object->value.IsObject()) {
    return FieldError(kWhat, "object", "a JSON object");
  }
  if (event.type == WatchEventType::kError) {
    ApiStatus status;
    NODEHOOK_RETURN_IF_ERROR(ReadApiStatus("watch ERROR event", object->value, &status));
    event.error_code = status.code;
    event.error_message = status.message.empty() ? status.reason : status.message;
  } else {
    bool full = event.type != WatchEventType::kBookmark;
    NODEHOOK_RETURN_IF_ERROR(ReadMeta(kWhat, object->value, full, &event.object.meta));
  }
  event.object.json = Serialize(object->value);
  return event;
}

Result<ApiStatus> ParseApiStatus(std::string_view json) {
  Document doc;
  NODEHOOK_RETURN_IF_ERROR(ParseDocument("status", json, &doc));
  ApiStatus status;
  NODEHOOK_RETURN_IF_ERROR(ReadApiStatus("status", doc, &status));
  return status;
}

}  // namespace nodehook
