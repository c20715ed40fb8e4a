#include "agent/kube/client/object_json.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <utility>

#include "agent/kube/client/json_scan.h"

namespace nodehook {
namespace {

using rapidjson::Document;
using rapidjson::Value;

Status FieldError(std::string_view what, std::string_view field, std::string_view expected) {
  return InvalidError(std::string(what) + ": field '" + std::string(field) + "': expected " +
                      std::string(expected));
}

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

Result<JsonScan> ScanObject(std::string_view what, std::string_view text) {
  auto scan = ScanJson(text);
  if (!scan.ok()) return InvalidError(std::string(what) + ": " + scan.status().message());
  if (scan->kind != '{') return InvalidError(std::string(what) + ": expected a JSON object");
  return scan;
}

// Decodes one member that must be a string (escapes resolved). `present` tells whether the
// member was there and not null; absent and null leave *out unchanged.
Status StringMember(std::string_view what, const JsonScan& parent, std::string_view key,
                    std::string_view field, std::string* out, bool* present = nullptr) {
  const JsonPart* part = parent.Find(key);
  bool there = part && part->value != "null";
  if (present) *present = there;
  if (!there) return Status::Ok();
  if (part->value.front() != '"') return FieldError(what, field, "a string");
  // The scanner validated it: without a backslash its text is the string (names, uids and
  // resource versions always are), and a Document per member was most of a watch event's cost.
  if (part->value.size() >= 2 && part->value.back() == '"') {
    const std::string_view inner = part->value.substr(1, part->value.size() - 2);
    if (inner.find('\\') == std::string_view::npos) {
      out->assign(inner);
      return Status::Ok();
    }
  }
  Document doc;  // a string is tiny and flat
  doc.Parse(part->value.data(), part->value.size());
  if (doc.HasParseError() || !doc.IsString()) return FieldError(what, field, "a string");
  out->assign(doc.GetString(), doc.GetStringLength());
  return Status::Ok();
}

Status RequiredString(std::string_view what, const JsonScan& parent, std::string_view key,
                      std::string_view field, std::string* out) {
  bool present = false;
  Status st = StringMember(what, parent, key, field, out, &present);
  if (!st.ok() || !present || out->empty()) return FieldError(what, field, "a non-empty string");
  return Status::Ok();
}

// Fills meta from object.metadata without parsing anything else (managedFields of a deep
// object are as deep as the object). A bookmark carries only resourceVersion, so name and uid
// are required only for full objects.
Status ReadMeta(std::string_view what, const JsonScan& object, bool full_object, ObjectMeta* meta) {
  const JsonPart* md = object.Find("metadata");
  if (!md || md->value.front() != '{') return FieldError(what, "metadata", "a JSON object");
  auto m = ScanJson(md->value);
  if (!m.ok()) return FieldError(what, "metadata", "a JSON object");
  // uid first: a quarantined object is worth its uid even when its name is unreadable.
  if (full_object) NODEHOOK_RETURN_IF_ERROR(RequiredString(what, *m, "uid", "metadata.uid", &meta->uid));
  NODEHOOK_RETURN_IF_ERROR(StringMember(what, *m, "namespace", "metadata.namespace", &meta->namespace_name));
  if (full_object) NODEHOOK_RETURN_IF_ERROR(RequiredString(what, *m, "name", "metadata.name", &meta->name));
  NODEHOOK_RETURN_IF_ERROR(
      StringMember(what, *m, "resourceVersion", "metadata.resourceVersion", &meta->resource_version));
  const JsonPart* ts = m->Find("deletionTimestamp");
  meta->deleting = ts && ts->value != "null";
  return Status::Ok();
}

// metadata.annotations["k8s.io/initial-events-end"] == "true" on a BOOKMARK object.
bool IsInitialEventsEnd(const JsonScan& bookmark) {
  const JsonPart* md = bookmark.Find("metadata");
  if (!md || md->value.front() != '{') return false;
  auto meta = ScanJson(md->value);
  const JsonPart* annotations = meta.ok() ? meta->Find("annotations") : nullptr;
  if (!annotations || annotations->value.front() != '{') return false;
  auto scan = ScanJson(annotations->value);
  const JsonPart* end = scan.ok() ? scan->Find("k8s.io/initial-events-end") : nullptr;
  return end && end->value == "\"true\"";
}

// Checks one ADDED/MODIFIED/DELETED or list object against the limits and reads its metadata.
// Returns the problem as a BadObject, or nullopt when the object is good; then *scan holds the
// object's members, so the caller need not scan it again.
std::optional<BadObject> CheckObject(std::string_view what, const JsonPart& part, const ObjectLimits& limits,
                                     ObjectMeta* meta, JsonScan* scan_out = nullptr) {
  std::optional<BadObject> bad;
  if (part.value.front() != '{') {
    bad = BadObject{{}, "malformed", std::string(what) + ": expected a JSON object"};
    return bad;
  }
  if (part.value.size() > limits.max_bytes) {
    bad = BadObject{{}, "too_big", "object is " + std::to_string(part.value.size()) + " bytes; max_object_bytes is " +
                                       std::to_string(limits.max_bytes)};
  } else if (part.depth > limits.max_depth) {
    bad = BadObject{{}, "too_deep", "object is nested " + std::to_string(part.depth) +
                                        " levels deep; max_object_depth is " + std::to_string(limits.max_depth)};
  }
  auto scan = ScanJson(part.value);  // already validated as part of its container
  Status read = scan.ok() ? ReadMeta(what, *scan, /*full_object=*/true, meta) : scan.status();
  if (!read.ok() && !bad) bad = BadObject{{}, "malformed", read.message()};
  if (bad) bad->meta = *meta;
  if (!bad && scan_out) *scan_out = std::move(scan).value();
  return bad;
}

Status ReadApiStatus(std::string_view what, const Value& v, ApiStatus* out) {
  if (!v.IsObject()) return FieldError(what, "object", "a Status object");
  auto code = v.FindMember("code");
  if (code != v.MemberEnd()) {
    if (!code->value.IsInt()) return FieldError(what, "code", "an integer");
    out->code = code->value.GetInt();
  }
  for (auto [key, field] : {std::pair{"reason", &out->reason}, std::pair{"message", &out->message}}) {
    auto it = v.FindMember(key);
    if (it == v.MemberEnd() || it->value.IsNull()) continue;
    if (!it->value.IsString()) return FieldError(what, key, "a string");
    field->assign(it->value.GetString(), it->value.GetStringLength());
  }
  // Read leniently: a cause is an explanation, never a reason to refuse the Status.
  auto details = v.FindMember("details");
  if (details != v.MemberEnd() && details->value.IsObject()) {
    auto causes = details->value.FindMember("causes");
    if (causes != details->value.MemberEnd() && causes->value.IsArray()) {
      for (const Value& cause : causes->value.GetArray()) {
        if (!cause.IsObject()) continue;
        auto message = cause.FindMember("message");
        if (message == cause.MemberEnd() || !message->value.IsString()) continue;
        out->causes.emplace_back(message->value.GetString(), message->value.GetStringLength());
      }
    }
  }
  return Status::Ok();
}

Result<ApiStatus> ParseStatusText(std::string_view what, std::string_view text) {
  Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());  // heap, not stack, for nesting
  if (doc.HasParseError()) {
    return InvalidError(std::string(what) + ": malformed JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                        ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  ApiStatus status;
  NODEHOOK_RETURN_IF_ERROR(ReadApiStatus(what, doc, &status));
  return status;
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

// `"apiVersion":"v1","kind":"Foo",` for items of a list whose kind is "FooList"; the raw string
// bytes are reused, so nothing is decoded and re-encoded.
struct ItemHeader {
  std::string kind_member, api_version_member;
};

ItemHeader HeaderFromList(const JsonScan& list) {
  ItemHeader header;
  const JsonPart* kind = list.Find("kind");
  constexpr std::string_view kListSuffix = "List\"";
  if (kind && kind->value.size() > kListSuffix.size() + 1 && kind->value.front() == '"' &&
      kind->value.substr(kind->value.size() - kListSuffix.size()) == kListSuffix) {
    header.kind_member = "\"kind\":" + std::string(kind->value.substr(0, kind->value.size() - kListSuffix.size())) + "\"";
  }
  const JsonPart* api_version = list.Find("apiVersion");
  if (api_version && api_version->value.front() == '"') {
    header.api_version_member = "\"apiVersion\":" + std::string(api_version->value);
  }
  return header;
}

std::string ItemJson(std::string_view item, const JsonScan& scan, const ItemHeader& header) {
  std::string inserted;
  for (auto [key, member] : {std::pair{"apiVersion", &header.api_version_member}, std::pair{"kind", &header.kind_member}}) {
    if (!member->empty() && !scan.Find(key)) inserted += *member + ",";
  }
  if (inserted.empty()) return std::string(item);
  if (scan.parts.empty()) inserted.pop_back();  // "{}" takes no trailing comma
  std::string json;
  json.reserve(item.size() + inserted.size());
  json.append(item.substr(0, 1)).append(inserted).append(item.substr(1));
  return json;
}

}  // namespace

Result<KubeObject> ParseObject(std::string_view json, const ObjectLimits& limits) {
  json = TrimSpace(json);  // the API server ends its responses with a newline
  auto scan = ScanObject("object", json);
  if (!scan.ok()) return scan.status();
  KubeObject obj;
  auto bad = CheckObject("object", JsonPart{{}, json, scan->depth}, limits, &obj.meta);
  if (bad) return InvalidError(bad->message);
  obj.json.assign(json.data(), json.size());
  return obj;
}

Result<ObjectList> ParseObjectList(std::string_view json, const ObjectLimits& limits) {
  constexpr std::string_view kWhat = "list";
  auto scan = ScanObject(kWhat, json);
  if (!scan.ok()) return scan.status();
  ObjectList list;
  const JsonPart* md = scan->Find("metadata");
  if (!md || md->value.front() != '{') return FieldError(kWhat, "metadata", "a JSON object");
  auto meta = ScanJson(md->value);
  if (!meta.ok()) return meta.status();
  NODEHOOK_RETURN_IF_ERROR(StringMember(kWhat, *meta, "resourceVersion", "metadata.resourceVersion",
                                        &list.resource_version));
  NODEHOOK_RETURN_IF_ERROR(StringMember(kWhat, *meta, "continue", "metadata.continue", &list.continue_token));

  const JsonPart* items = scan->Find("items");
  if (!items || items->value == "null") return list;  // empty lists may send null
  if (items->value.front() != '[') return FieldError(kWhat, "items", "an array");
  auto elements = ScanJson(items->value);
  if (!elements.ok()) return elements.status();
  ItemHeader header = HeaderFromList(*scan);
  for (size_t i = 0; i < elements->parts.size(); ++i) {
    const JsonPart& element = elements->parts[i];
    std::string what = "list item " + std::to_string(i);
    KubeObject obj;
    JsonScan item_scan;
    if (auto bad = CheckObject(what, element, limits, &obj.meta, &item_scan)) {
      list.quarantined.push_back(std::move(*bad));
      continue;
    }
    obj.json = ItemJson(element.value, item_scan, header);
    list.items.push_back(std::move(obj));
  }
  return list;
}

Result<WatchEvent> ParseWatchEvent(std::string_view line, const ObjectLimits& limits) {
  constexpr std::string_view kWhat = "watch event";
  auto scan = ScanObject(kWhat, line);
  if (!scan.ok()) return scan.status();
  WatchEvent event;
  std::string type_name;
  NODEHOOK_RETURN_IF_ERROR(RequiredString(kWhat, *scan, "type", "type", &type_name));
  if (!ParseEventType(type_name, &event.type)) {
    return FieldError(kWhat, "type", "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, got '" + type_name + "'");
  }
  const JsonPart* object = scan->Find("object");
  if (!object || object->value.front() != '{') return FieldError(kWhat, "object", "a JSON object");
  if (event.type == WatchEventType::kError) {
    auto status = ParseStatusText("watch ERROR event", object->value);
    if (!status.ok()) return status.status();
    event.error_code = status->code;
    event.error_message = status->message.empty() ? status->reason : status->message;
  } else if (event.type == WatchEventType::kBookmark) {
    auto bookmark = ScanJson(object->value);
    NODEHOOK_RETURN_IF_ERROR(ReadMeta(kWhat, *bookmark, /*full_object=*/false, &event.object.meta));
    event.initial_events_end = IsInitialEventsEnd(*bookmark);
  } else {
    event.quarantined = CheckObject(kWhat, *object, limits, &event.object.meta);
    if (event.quarantined) return event;
  }
  event.object.json.assign(object->value.data(), object->value.size());
  return event;
}

Result<ApiStatus> ParseApiStatus(std::string_view json) { return ParseStatusText("status", json); }

}  // namespace nodehook
