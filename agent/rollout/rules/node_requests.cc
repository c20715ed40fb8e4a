#include "agent/rollout/rules/node_requests.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/json_text.h"

namespace nodehook {

std::string EncodeNodeRequests(const std::map<std::string, NodeRequest>& requests) {
  if (requests.empty()) return "";
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  for (const auto& [uid, r] : requests) {
    w.Key(uid.c_str(), static_cast<rapidjson::SizeType>(uid.size()));
    w.StartObject();
    PutString(w, "state", r.state);
    PutString(w, "object", r.object);
    if (!r.resume.empty()) PutString(w, "resume", r.resume);
    if (r.selector) {
      w.Key("selector");
      w.StartObject();
      size_t bytes = 0;
      for (const auto& [key, value] : *r.selector) {
        bytes += key.size() + value.size();
        if (bytes > kRequestSelectorBytes) break;
        PutString(w, key.c_str(), value);
      }
      w.EndObject();
    }
    if (r.started) {
      w.Key("started");
      w.Bool(true);
    }
    w.EndObject();
  }
  w.EndObject();
  return buf.GetString();
}

Status DecodeNodeRequests(const std::string& json, std::map<std::string, NodeRequest>* out) {
  if (json.empty()) return Status::Ok();
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidError(std::string(kNodeRequestsAnnotation) + ": not a JSON object");
  }
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string uid = it->name.GetString();
    NodeRequest r;
    r.state = StringMember(it->value, "state");
    if (r.state.empty()) {
      return InvalidError(std::string(kNodeRequestsAnnotation) + ": entry " + uid + ": expected an object with a state");
    }
    r.object = StringMember(it->value, "object");
    r.resume = StringMember(it->value, "resume");
    auto selector = it->value.FindMember("selector");
    if (selector != it->value.MemberEnd() && selector->value.IsObject()) {
      LabelMap labels;
      for (auto m = selector->value.MemberBegin(); m != selector->value.MemberEnd(); ++m) {
        if (m->value.IsString()) labels[m->name.GetString()] = m->value.GetString();
      }
      r.selector = std::move(labels);
    }
    auto started = it->value.FindMember("started");
    r.started = started != it->value.MemberEnd() && started->value.IsTrue();
    (*out)[uid] = std::move(r);
  }
  return Status::Ok();
}

}  // namespace nodehook
