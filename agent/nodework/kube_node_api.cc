#include "agent/nodework/kube_node_api.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"

namespace nodehook {
namespace {

const ResourceRef& Nodes() {
  static const ResourceRef nodes{"", "v1", "nodes", "", ""};
  return nodes;
}

ResourceRef PodsOn(const std::string& node, const std::string& selector) {
  return ResourceRef{"", "v1", "pods", "", selector, "spec.nodeName=" + node};
}

// {"metadata":{"resourceVersion":...,"annotations":{key: value-or-null}},"spec":{"unschedulable":...}}
std::string NodePatch(const NodeState& seen, const std::string& key, const std::string* value, bool set_spec,
                      bool unschedulable) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  PutString(w, "resourceVersion", seen.resource_version);
  w.Key("annotations");
  w.StartObject();
  w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
  if (value) {
    w.String(value->c_str(), static_cast<rapidjson::SizeType>(value->size()));
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndObject();
  if (set_spec) {
    w.Key("spec");
    w.StartObject();
    w.Key("unschedulable");
    if (unschedulable) {
      w.Bool(true);
    } else {
      w.Null();  // as `kubectl uncordon` leaves it: absent
    }
    w.EndObject();
  }
  w.EndObject();
  return buffer.GetString();
}

bool ControlledByDaemonSet(const rapidjson::Value& meta) {
  const rapidjson::Value* owners = MemberOf(meta, "ownerReferences");
  if (!owners || !owners->IsArray()) return false;
  for (const auto& owner : owners->GetArray()) {
    const rapidjson::Value* controller = MemberOf(owner, "controller");
    if (StringMember(owner, "kind") == "DaemonSet" && controller && controller->IsTrue()) return true;
  }
  return false;
}

}  // namespace

Result<NodeState> ParseNodeState(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("node: not a JSON object");
  NodeState node;
  const rapidjson::Value* meta = MemberOf(doc, "metadata");
  if (meta) {
    node.resource_version = StringMember(*meta, "resourceVersion");
    const rapidjson::Value* notes = MemberOf(*meta, "annotations");
    if (notes && notes->IsObject()) {
      for (auto it = notes->MemberBegin(); it != notes->MemberEnd(); ++it) {
        std::string key(it->name.GetString(), it->name.GetStringLength());
        if (key.rfind(kCordonMarkPrefix, 0) == 0 && it->value.IsString()) {
          node.marks[key] = std::string(it->value.GetString(), it->value.GetStringLength());
        }
      }
    }
  }
  const rapidjson::Value* spec = MemberOf(doc, "spec");
  const rapidjson::Value* unschedulable = spec ? MemberOf(*spec, "unschedulable") : nullptr;
  node.unschedulable = unschedulable && unschedulable->IsTrue();
  const rapidjson::Value* status = MemberOf(doc, "status");
  const rapidjson::Value* info = status ? MemberOf(*status, "nodeInfo") : nullptr;
  if (info) node.boot_id = StringMember(*info, "bootID");
  return node;
}

Result<std::vector<PodOnNode>> ParsePods(const std::vector<std::string>& pod_json) {
  std::vector<PodOnNode> pods;
  for (const std::string& json : pod_json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) return InvalidError("pod: not a JSON object");
    const rapidjson::Value* meta = MemberOf(doc, "metadata");
    if (!meta) return InvalidError("pod: no metadata");
    PodOnNode pod;
    pod.namespace_name = StringMember(*meta, "namespace");
    pod.name = StringMember(*meta, "name");
    pod.uid = StringMember(*meta, "uid");
    pod.daemon_set = ControlledByDaemonSet(*meta);
    const rapidjson::Value* notes = MemberOf(*meta, "annotations");
    pod.mirror = notes && MemberOf(*notes, "kubernetes.io/config.mirror") != nullptr;
    pod.terminating = MemberOf(*meta, "deletionTimestamp") != nullptr;
    const rapidjson::Value* status = MemberOf(doc, "status");
    const std::string phase = status ? StringMember(*status, "phase") : "";
    pod.finished = phase == "Succeeded" || phase == "Failed";
    pods.push_back(std::move(pod));
  }
  return pods;
}

Result<NodeState> KubeNodeApi::GetNode() {
  Result<KubeObject> node = client_.Get(ObjectRef{Nodes(), "", node_});
  if (!node.ok()) return node.status();
  return ParseNodeState(node->json);
}

Status KubeNodeApi::Cordon(const NodeState& seen, const std::string& key, const std::string& value) {
  return client_.Patch(ObjectRef{Nodes(), "", node_}, PatchType::kMerge, NodePatch(seen, key, &value, true, true));
}

Status KubeNodeApi::Unmark(const NodeState& seen, const std::string& key, bool uncordon) {
  return client_.Patch(ObjectRef{Nodes(), "", node_}, PatchType::kMerge,
                       NodePatch(seen, key, nullptr, uncordon, false));
}

Result<std::vector<PodOnNode>> KubeNodeApi::Pods(const std::string& selector) {
  Result<ObjectList> listed = ListAll(client_, PodsOn(node_, selector));
  if (!listed.ok()) return listed.status();
  std::vector<std::string> json;
  json.reserve(listed->items.size());
  for (const KubeObject& item : listed->items) json.push_back(item.json);
  return ParsePods(json);
}

Status KubeNodeApi::Evict(const PodOnNode& pod, int grace_period_seconds) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  PutString(w, "apiVersion", "policy/v1");
  PutString(w, "kind", "Eviction");
  w.Key("metadata");
  w.StartObject();
  PutString(w, "name", pod.name);
  PutString(w, "namespace", pod.namespace_name);
  w.EndObject();
  w.Key("deleteOptions");
  w.StartObject();
  if (grace_period_seconds >= 0) {
    w.Key("gracePeriodSeconds");
    w.Int(grace_period_seconds);
  }
  w.Key("preconditions");
  w.StartObject();
  PutString(w, "uid", pod.uid);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  ObjectRef ref{ResourceRef{"", "v1", "pods", "", ""}, pod.namespace_name, pod.name, "eviction"};
  return client_.PostTo(ref, buffer.GetString());
}

}  // namespace nodehook
