#include "agent/rollout/rules/rollout_leases.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdlib>

#include "agent/base/json_text.h"
#include "agent/kube/client/lease_record.h"
#include "agent/object/essence.h"
#include "agent/rollout/rules/node_results.h"

namespace nodehook {
namespace {

using rapidjson::Value;

const char* const kObjectAnnotation = "nodehook.io/rollout-object";
const char* const kStateAnnotation = "nodehook.io/rollout-state";
const char* const kPhaseAnnotation = "nodehook.io/rollout-phase";
const char* const kDetailAnnotation = "nodehook.io/rollout-detail";
const char* const kPolicyAnnotation = "nodehook.io/rollout-policy";
const char* const kResourceAnnotation = "nodehook.io/rollout-resource";
const char* const kScopeAnnotation = "nodehook.io/rollout-namespace";
const char* const kLabelsAnnotation = "nodehook.io/rollout-node-labels";

std::string LabelsJson(const LabelMap& labels) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  for (const auto& [key, value] : labels) PutString(w, key.c_str(), value);
  w.EndObject();
  return buf.GetString();
}

// nullopt unless a JSON object of strings.
std::optional<LabelMap> ReadLabels(const Value& annotations) {
  auto it = annotations.FindMember(kLabelsAnnotation);
  if (it == annotations.MemberEnd() || !it->value.IsString()) return std::nullopt;
  rapidjson::Document doc;
  doc.Parse(it->value.GetString(), it->value.GetStringLength());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  LabelMap labels;
  for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
    if (!m->value.IsString()) return std::nullopt;
    labels[m->name.GetString()] = m->value.GetString();
  }
  return labels;
}
const char* const kSlotAnnotation = "nodehook.io/rollout-slot";
const char* const kCanaryAnnotation = "nodehook.io/rollout-canary";

int64_t Number(const Value& object, const char* key, int64_t fallback) {
  if (!object.IsObject()) return fallback;
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : fallback;
}

// A whole decimal number, or `fallback` for anything else.
int IntOr(const std::string& text, int fallback) {
  if (text.empty()) return fallback;
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000) return fallback;
  return static_cast<int>(value);
}

void PutCount(JsonWriter& w, const char* key, const NodeCount& count) {
  w.Key(key);
  if (count.percent) {
    std::string text = std::to_string(count.value) + "%";
    w.String(text.c_str());
  } else {
    w.Int(count.value);
  }
}

NodeCount ReadCount(const Value& object, const char* key, NodeCount fallback) {
  auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return fallback;
  if (it->value.IsInt()) return NodeCount{it->value.GetInt(), false};
  if (it->value.IsString()) {
    std::string text = it->value.GetString();
    if (!text.empty() && text.back() == '%') {
      int value = IntOr(text.substr(0, text.size() - 1), -1);
      if (value >= 0) return NodeCount{value, true};
    }
  }
  return fallback;
}

// A holder's step as its slot Lease names it: a step inside a slot; any other name, running.
NodeStep SlotStepOf(std::string_view name) {
  std::optional<NodeStep> step = NodeStepNamed(name);
  return step && *step >= NodeStep::kCordoning && *step <= NodeStep::kSoaking ? *step : NodeStep::kRunning;
}

}  // namespace

std::string RolloutId(const std::string& resource_id) { return EssenceDigest(resource_id).substr(0, 10); }

std::string RolloutIdOf(const ResourceRef& entry) {
  // A cluster-wide entry keeps the id it always had, so its Leases survive an upgrade.
  return RolloutId(entry.namespace_name.empty() ? entry.Id() : entry.Id() + " in " + entry.namespace_name);
}

std::string SlotLeaseName(const std::string& rid, int slot) {
  return "nodehook-rollout-" + rid + "-slot-" + std::to_string(slot);
}

std::string NodeLeaseName(const std::string& rid, const std::string& node) {
  return NodeLeaseNameIn("rollout", rid, node);
}

std::string NodeLeaseNameIn(const std::string& family, const std::string& rid, const std::string& node) {
  std::string name = "nodehook-" + family + "-" + rid + "-node-" + node;
  return name.size() <= 253 ? name : HashedNodeLeaseName(family, rid, node);
}

std::string HashedNodeLeaseName(const std::string& family, const std::string& rid, const std::string& node) {
  return "nodehook-" + family + "-" + rid + "-node-" + RolloutForValue(node);
}

std::string RolloutForValue(const std::string& node) { return EssenceDigest(node).substr(0, 12); }

Result<RolloutLease> ParseRolloutLease(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("rollout lease: not a JSON object");
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return InvalidError("rollout lease: no metadata");
  RolloutLease lease;
  lease.name = StringMember(meta->value, "name");
  lease.resource_version = StringMember(meta->value, "resourceVersion");
  auto labels = meta->value.FindMember("labels");
  if (labels != meta->value.MemberEnd()) lease.kind = StringMember(labels->value, kRolloutKindLabel);
  if (lease.kind != "slot" && lease.kind != "node") {
    return InvalidError("rollout lease " + lease.name + ": label " + kRolloutKindLabel + " is neither slot nor node");
  }
  auto spec = doc.FindMember("spec");
  if (spec != doc.MemberEnd() && spec->value.IsObject()) {
    lease.holder = StringMember(spec->value, "holderIdentity");
    lease.renew_time = StringMember(spec->value, "renewTime");
    lease.lease_duration_seconds = static_cast<int>(Number(spec->value, "leaseDurationSeconds", 0));
  }
  auto notes = meta->value.FindMember("annotations");
  const Value empty(rapidjson::kObjectType);
  const Value& a = notes != meta->value.MemberEnd() && notes->value.IsObject() ? notes->value : empty;
  lease.resource = StringMember(a, kResourceAnnotation);
  lease.scope = StringMember(a, kScopeAnnotation);
  if (lease.kind == "slot") {
    lease.slot = IntOr(StringMember(a, kSlotAnnotation), -1);
    lease.uid = StringMember(a, kObjectAnnotation);
    lease.state = StringMember(a, kStateAnnotation);
    lease.phase = SlotStepOf(StringMember(a, kPhaseAnnotation));
    lease.detail = StringMember(a, kDetailAnnotation);
    lease.canary = StringMember(a, kCanaryAnnotation) == "true";
  } else {
    lease.policy_json = StringMember(a, kPolicyAnnotation);
    lease.labels = ReadLabels(a);
    auto owners = meta->value.FindMember("ownerReferences");
    if (owners != meta->value.MemberEnd() && owners->value.IsArray()) {
      for (const auto& owner : owners->value.GetArray()) {
        if (StringMember(owner, "kind") == "Node") lease.owner_uid = StringMember(owner, "uid");
      }
    }
    Status read = DecodeNodeResults(StringMember(a, kNodeResultsAnnotation), &lease.results);
    if (!read.ok()) return InvalidError("rollout lease " + lease.name + ": " + read.message());
    read = DecodeNodeRequests(StringMember(a, kNodeRequestsAnnotation), &lease.requests);
    if (!read.ok()) return InvalidError("rollout lease " + lease.name + ": " + read.message());
  }
  return lease;
}

std::string RolloutLeaseJson(const std::string& namespace_name, const std::string& rid, const RolloutLease& lease,
                             const char* family_label) {
  LeaseRecord record;
  record.holder = lease.holder;
  record.lease_duration_seconds = lease.lease_duration_seconds;
  record.renew_time = lease.renew_time;
  record.resource_version = lease.resource_version;
  LeaseMetadataMap annotations{{kResourceAnnotation, lease.resource}};
  if (!lease.scope.empty()) annotations[kScopeAnnotation] = lease.scope;
  if (lease.kind == "slot") {
    annotations[kSlotAnnotation] = std::to_string(lease.slot);
    annotations[kObjectAnnotation] = lease.uid;
    annotations[kStateAnnotation] = lease.state;
    annotations[kPhaseAnnotation] = NodeStepName(lease.phase);
    if (!lease.detail.empty()) annotations[kDetailAnnotation] = lease.detail;
    if (lease.canary) annotations[kCanaryAnnotation] = "true";
  } else {
    if (!lease.policy_json.empty()) annotations[kPolicyAnnotation] = lease.policy_json;
    annotations[kNodeResultsAnnotation] =
        lease.results_json.empty() ? EncodeNodeResults(lease.results).json : lease.results_json;
    if (lease.labels) annotations[kLabelsAnnotation] = LabelsJson(*lease.labels);
    std::string requests = EncodeNodeRequests(lease.requests);
    if (!requests.empty()) annotations[kNodeRequestsAnnotation] = requests;
  }
  LeaseMetadataMap labels{{family_label, rid}, {kRolloutKindLabel, lease.kind}};
  if (!lease.holder.empty()) labels[kRolloutForLabel] = RolloutForValue(lease.holder);
  return LeaseJson(namespace_name, lease.name, record, labels,
                   annotations, LeaseOwnerNode{lease.holder, lease.kind == "node" ? lease.owner_uid : ""});
}

std::string SharedPolicyJson(const WatchedResource& resource) {
  const RolloutPolicy& policy = *resource.rollout;
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  PutCount(w, "max_nodes", policy.max_nodes);
  w.Key("canary_nodes");
  w.Int(policy.canary_nodes);
  w.Key("soak_seconds");
  w.Int64(policy.soak.count());
  w.Key("verify");
  w.Bool(policy.verify.has_value());
  PutCount(w, "max_failed_nodes", policy.max_failed_nodes);
  w.Key("failure_after_retries");
  w.Int(policy.failure_after_retries);
  PutString(w, "hold_label", policy.hold_label);
  w.Key("windows");
  w.StartArray();
  for (const auto& window : policy.windows) {
    w.StartObject();
    PutString(w, "cron", window.cron);
    w.Key("duration_seconds");
    w.Int64(window.duration.count());
    PutString(w, "time_zone", window.time_zone);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ignored_paths");
  w.StartArray();
  for (const auto& path : resource.ignored_paths) w.String(path.c_str(), static_cast<rapidjson::SizeType>(path.size()));
  w.EndArray();
  if (!resource.node_selector_path.empty()) PutString(w, "node_selector_path", resource.node_selector_path);
  w.EndObject();
  return buf.GetString();
}

Result<SharedPolicy> ParseSharedPolicyJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError(std::string(kPolicyAnnotation) + ": not a JSON object");
  SharedPolicy shared;
  RolloutPolicy& policy = shared.policy;
  policy.max_nodes = ReadCount(doc, "max_nodes", policy.max_nodes);
  policy.canary_nodes = static_cast<int>(Number(doc, "canary_nodes", 0));
  policy.soak = std::chrono::seconds(Number(doc, "soak_seconds", 0));
  auto verify = doc.FindMember("verify");
  if (verify != doc.MemberEnd() && verify->value.IsBool() && verify->value.GetBool()) policy.verify = HookSpec{};
  policy.max_failed_nodes = ReadCount(doc, "max_failed_nodes", policy.max_failed_nodes);
  policy.failure_after_retries = static_cast<int>(Number(doc, "failure_after_retries", policy.failure_after_retries));
  std::string hold = StringMember(doc, "hold_label");
  if (!hold.empty()) policy.hold_label = hold;
  auto windows = doc.FindMember("windows");
  if (windows != doc.MemberEnd() && windows->value.IsArray()) {
    for (const auto& w : windows->value.GetArray()) {
      policy.windows.push_back(RolloutWindow{StringMember(w, "cron"), std::chrono::seconds(Number(w, "duration_seconds", 0)),
                                             StringMember(w, "time_zone")});
    }
  }
  auto ignored = doc.FindMember("ignored_paths");
  if (ignored != doc.MemberEnd() && ignored->value.IsArray()) {
    for (const auto& path : ignored->value.GetArray()) {
      if (path.IsString()) shared.ignored_paths.emplace_back(path.GetString(), path.GetStringLength());
    }
  }
  shared.node_selector_path = StringMember(doc, "node_selector_path");
  return shared;
}

}  // namespace nodehook
