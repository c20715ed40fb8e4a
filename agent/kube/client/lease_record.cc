#include "agent/kube/client/lease_record.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/json_text.h"

namespace nodehook {
Result<LeaseRecord> ParseLease(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("lease: not a JSON object");
  LeaseRecord record;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return InvalidError("lease: no metadata");
  record.resource_version = StringMember(meta->value, "resourceVersion");
  if (record.resource_version.empty()) return InvalidError("lease: metadata.resourceVersion missing");
  auto annotations = meta->value.FindMember("annotations");
  if (annotations != meta->value.MemberEnd() && annotations->value.IsObject()) {
    record.standbys = StringMember(annotations->value, kStandbysAnnotation);
    record.handover = StringMember(annotations->value, kHandoverAnnotation);
    // A note, not part of the election: an unreadable one is taken as not said.
    const std::string fleet = StringMember(annotations->value, kFleetSizeAnnotation);
    record.fleet_size = fleet.empty() || fleet.size() > 9 ||
                                fleet.find_first_not_of("0123456789") != std::string::npos
                            ? 0
                            : std::stoi(fleet);
  }
  auto spec = doc.FindMember("spec");
  if (spec == doc.MemberEnd()) return record;  // an empty Lease: free to take
  if (!spec->value.IsObject()) return InvalidError("lease: spec is not an object");
  const rapidjson::Value& s = spec->value;
  record.holder = StringMember(s, "holderIdentity");
  record.acquire_time = StringMember(s, "acquireTime");
  record.renew_time = StringMember(s, "renewTime");
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

std::map<std::string, std::string> LeaseNotes(const LeaseRecord& record) {
  std::map<std::string, std::string> notes;
  if (!record.standbys.empty()) notes[kStandbysAnnotation] = record.standbys;
  if (record.fleet_size > 0) notes[kFleetSizeAnnotation] = std::to_string(record.fleet_size);
  if (!record.handover.empty()) notes[kHandoverAnnotation] = record.handover;
  return notes;
}

bool NamedStandby(const std::string& standbys, const std::string& identity) {
  size_t start = 0;
  while (start <= standbys.size()) {
    size_t end = standbys.find(',', start);
    if (end == std::string::npos) end = standbys.size();
    const std::string node = standbys.substr(start, end - start);
    if (!node.empty() && (identity == node || identity.rfind(node + "_", 0) == 0)) return true;
    start = end + 1;
  }
  return false;
}

namespace {

void PutMap(JsonWriter& w, const char* key, const LeaseMetadataMap& map) {
  if (map.empty()) return;
  w.Key(key);
  w.StartObject();
  for (const auto& [k, v] : map) PutString(w, k.c_str(), v);
  w.EndObject();
}

}  // namespace

std::string LeaseJson(const std::string& namespace_name, const std::string& name, const LeaseRecord& record,
                      const LeaseMetadataMap& labels, const LeaseMetadataMap& annotations, const LeaseOwnerNode& owner) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  PutString(w, "apiVersion", "coordination.k8s.io/v1");
  PutString(w, "kind", "Lease");
  w.Key("metadata");
  w.StartObject();
  PutString(w, "namespace", namespace_name);
  PutString(w, "name", name);
  if (!record.resource_version.empty()) PutString(w, "resourceVersion", record.resource_version);
  PutMap(w, "labels", labels);
  PutMap(w, "annotations", annotations);
  if (!owner.uid.empty()) {
    w.Key("ownerReferences");
    w.StartArray();
    w.StartObject();
    PutString(w, "apiVersion", "v1");
    PutString(w, "kind", "Node");
    PutString(w, "name", owner.name);
    PutString(w, "uid", owner.uid);
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  PutString(w, "holderIdentity", record.holder);
  w.Key("leaseDurationSeconds");
  w.Int(record.lease_duration_seconds);
  if (!record.acquire_time.empty()) PutString(w, "acquireTime", record.acquire_time);
  if (!record.renew_time.empty()) PutString(w, "renewTime", record.renew_time);
  w.Key("leaseTransitions");
  w.Int(record.transitions);
  w.EndObject();
  w.EndObject();
  return buf.GetString();
}

}  // namespace nodehook
