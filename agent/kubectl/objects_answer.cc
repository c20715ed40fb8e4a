#include "agent/kubectl/objects_answer.h"

#include <rapidjson/document.h>

namespace nodehook {
namespace {

using Value = rapidjson::Value;

// Field readers: each fails with the path of the field, e.g. "objects[2].handlers[0].retries".
Status Text(const Value& v, const char* key, const std::string& where, std::string* out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return InvalidError(where + "." + key + ": expected a string");
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return Status::Ok();
}

template <typename T>
Status Number(const Value& v, const char* key, const std::string& where, T* out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsInt64()) return InvalidError(where + "." + key + ": expected an integer");
  *out = static_cast<T>(it->value.GetInt64());
  return Status::Ok();
}

Status Flag(const Value& v, const char* key, const std::string& where, bool* out) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsBool()) return InvalidError(where + "." + key + ": expected true or false");
  *out = it->value.GetBool();
  return Status::Ok();
}

Status ReadHandler(const Value& v, const std::string& where, const ObjectView& object, HandlerRecord* h) {
  if (!v.IsObject()) return InvalidError(where + ": expected an object");
  h->uid = object.uid;
  h->resource = object.resource;
  h->namespace_name = object.namespace_name;
  h->name = object.name;
  NODEHOOK_RETURN_IF_ERROR(Text(v, "handler", where, &h->handler));
  NODEHOOK_RETURN_IF_ERROR(Text(v, "outcome", where, &h->last_outcome));
  NODEHOOK_RETURN_IF_ERROR(Number(v, "retries", where, &h->retries));
  NODEHOOK_RETURN_IF_ERROR(Number(v, "next_attempt_ms", where, &h->next_attempt_ms));
  NODEHOOK_RETURN_IF_ERROR(Number(v, "first_start_ms", where, &h->first_start_ms));
  return Text(v, "last_message", where, &h->last_message);
}

Status ReadObject(const Value& v, const std::string& where, ObjectView* o) {
  if (!v.IsObject()) return InvalidError(where + ": expected an object");
  NODEHOOK_RETURN_IF_ERROR(Text(v, "resource", where, &o->resource));
  NODEHOOK_RETURN_IF_ERROR(Text(v, "namespace", where, &o->namespace_name));
  NODEHOOK_RETURN_IF_ERROR(Text(v, "name", where, &o->name));
  NODEHOOK_RETURN_IF_ERROR(Text(v, "uid", where, &o->uid));
  bool handled = false;
  NODEHOOK_RETURN_IF_ERROR(Flag(v, "handled", where, &handled));
  if (handled) {
    int64_t handled_at_ms = 0;
    NODEHOOK_RETURN_IF_ERROR(Number(v, "handled_at_ms", where, &handled_at_ms));
    o->handled_at_ms = handled_at_ms;
  }
  // Older agents do not send it: then no state counts as settled there.
  if (v.HasMember("settled_resource_version")) {
    NODEHOOK_RETURN_IF_ERROR(Text(v, "settled_resource_version", where, &o->settled_resource_version));
  }
  auto handlers = v.FindMember("handlers");
  if (handlers == v.MemberEnd() || !handlers->value.IsArray()) {
    return InvalidError(where + ".handlers: expected an array");
  }
  for (rapidjson::SizeType i = 0; i < handlers->value.Size(); ++i) {
    HandlerRecord h;
    NODEHOOK_RETURN_IF_ERROR(
        ReadHandler(handlers->value[i], where + ".handlers[" + std::to_string(i) + "]", *o, &h));
    o->handlers.push_back(std::move(h));
  }
  return Status::Ok();
}

}  // namespace

Result<NodeObjects> ParseObjectsAnswer(const std::string& json) {
  rapidjson::Document doc;
  if (doc.Parse(json.c_str(), json.size()).HasParseError() || !doc.IsObject()) {
    return InvalidError("the answer is not a JSON object: " + json.substr(0, 200));
  }
  NodeObjects out;
  NODEHOOK_RETURN_IF_ERROR(Text(doc, "node", "answer", &out.node));
  NODEHOOK_RETURN_IF_ERROR(Number(doc, "snapshot_at_ms", "answer", &out.snapshot_at_ms));
  NODEHOOK_RETURN_IF_ERROR(Number(doc, "total", "answer", &out.total));
  NODEHOOK_RETURN_IF_ERROR(Flag(doc, "truncated", "answer", &out.truncated));
  std::string messages;
  NODEHOOK_RETURN_IF_ERROR(Text(doc, "messages", "answer", &messages));
  out.messages_hidden = messages == "hidden";
  auto bound = doc.FindMember("node_bound");
  if (bound != doc.MemberEnd() && bound->value.IsString()) out.node_bound = bound->value.GetString();
  auto objects = doc.FindMember("objects");
  if (objects == doc.MemberEnd() || !objects->value.IsArray()) return InvalidError("answer.objects: expected an array");
  for (rapidjson::SizeType i = 0; i < objects->value.Size(); ++i) {
    ObjectView o;
    NODEHOOK_RETURN_IF_ERROR(ReadObject(objects->value[i], "answer.objects[" + std::to_string(i) + "]", &o));
    out.objects.push_back(std::move(o));
  }
  return out;
}

}  // namespace nodehook
