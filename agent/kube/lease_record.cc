#include "agent/kube/lease_record.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nodehook {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

std::string StringField(const rapidjson::Value& spec, const char* key) {
  auto it = spec.FindMember(key);
  return it != spec.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

}  // namespace

Result<LeaseRecord> ParseLease(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("lease: not a JSON object");
  LeaseRecord record;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return InvalidError("lease: no metadata");
  record.resource_version = StringField(meta->value, "resourceVersion");
  if (record.resource_version.empty()) return InvalidError("lease: metadata.resourceVersion missing");
  auto spec = doc.FindMember("spec");
  if (spec == doc.MemberEnd()) return record;  // an empty Lease: free to take
  if (!spec->value.IsObject()) return InvalidError("lease: spec is not an object");
  const rapidjson::Value& s = spec->value;
  record.holder = StringField(s, "holderIdentity");
  record.acquire_time = StringField(s, "acquireTime");
  record.renew_time = StringField(s, "renewTime");
  auto duration = s.FindMember("leaseDurationSeconds");
  if (duration != s.MemberEnd()) {
    if (!duration->value.IsInt()) return InvalidError("lease: spec.leaseDurationSeconds is not an integer");
    record.lease_duration_seconds = duration->value.GetInt();
  }
  auto transitions = s.FindMember("leaseTransitions");
  if (transitions != s.MemberEnd()) {
    if (!transitions->value.IsInt()) return InvalidError("lease: spec.leaseTransitions is not an integer");
    record.transitions = transitions->value.GetInt();
  }
  return record;
}

std::string LeaseJson(const std::string& namespace_name, const std::string& name, const LeaseRecord& record) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  Key(w, "apiVersion", "coordination.k8s.io/v1");
  Key(w, "kind", "Lease");
  w.Key("metadata");
  w.StartObject();
  Key(w, "namespace", namespace_name);
  Key(w, "name", name);
  if (!record.resource_version.empty()) Key(w, "resourceVersion", record.resource_version);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  Key(w, "holderIdentity", record.holder);
  w.Key("leaseDurationSeconds");
  w.Int(record.lease_duration_seconds);
  if (!record.acquire_time.empty()) Key(w, "acquireTime", record.acquire_time);
  if (!record.renew_time.empty()) Key(w, "renewTime", record.renew_time);
  w.Key("leaseTransitions");
  w.Int(record.transitions);
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

}  // namespace nodehook
