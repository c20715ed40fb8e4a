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

// {"metadata":{"resourceVersion":...,"annotations":{key: value-or-null, ...}},"spec":{"unschedulable":...}}
std::string NodePatch(const NodeState& seen, const std::vector<std::pair<std::string, const std::string*>>& notes,
                      bool set_spec, bool unschedulable) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  PutString(w, "resourceVersion", seen.resource_version);
  w.Key("annotations");
  w.StartObject();
  for (const auto& [key, value] : notes) {
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    if (value) {
      w.String(value->c_str(), static_cast<rapidjson::SizeType>(value->size()));
    } else {
      w.Null();
    }
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

// The kind of the pod's controller (the owner reference with controller: true), "" = none.
std::string ControllerKind(const rapidjson::Value& meta) {
  const rapidjson::Value* owners = MemberOf(meta, "ownerReferences");
  if (!owners || !owners->IsArray()) return "";
  for (const auto& owner : owners->GetArray()) {
    const rapidjson::Value* controller = MemberOf(owner, "controller");
    if (controller && controller->IsTrue()) return StringMember(owner, "kind");
  }
  return "";
}

bool HasEmptyDir(const rapidjson::Value* spec) {
  const rapidjson::Value* volumes = spec ? MemberOf(*spec, "volumes") : nullptr;
  if (!volumes || !volumes->IsArray()) return false;
  for (const auto& volume : volumes->GetArray()) {
    if (MemberOf(volume, "emptyDir") != nullptr) return true;
  }
  return false;
}

// Whether a toleration matches the cordon's taint, node.kubernetes.io/unschedulable:NoSchedule
// (whose value is empty), as the scheduler matches them.
bool ToleratesCordon(const rapidjson::Value* spec) {
  const rapidjson::Value* tolerations = spec ? MemberOf(*spec, "tolerations") : nullptr;
  if (!tolerations || !tolerations->IsArray()) return false;
  for (const auto& t : tolerations->GetArray()) {
    const std::string effect = StringMember(t, "effect");
    if (!effect.empty() && effect != "NoSchedule") continue;
    const std::string key = StringMember(t, "key");
    const std::string op = StringMember(t, "operator");
    if (op == "Exists" && (key.empty() || key == "node.kubernetes.io/unschedulable")) return true;
    if (op != "Exists" && key == "node.kubernetes.io/unschedulable" && StringMember(t, "value").empty()) return true;
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
    node.uid = StringMember(*meta, "uid");
    node.name = StringMember(*meta, "name");
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
    const std::string controller = ControllerKind(*meta);
    pod.daemon_set = controller == "DaemonSet";
    pod.controlled = !controller.empty();
    const rapidjson::Value* notes = MemberOf(*meta, "annotations");
    pod.mirror = notes && MemberOf(*notes, "kubernetes.io/config.mirror") != nullptr;
    const rapidjson::Value* labels = MemberOf(*meta, "labels");
    pod.steward = labels && MemberOf(*labels, kStewardLabel) != nullptr;
    pod.terminating = MemberOf(*meta, "deletionTimestamp") != nullptr;
    const rapidjson::Value* status = MemberOf(doc, "status");
    const std::string phase = status ? StringMember(*status, "phase") : "";
    pod.finished = phase == "Succeeded" || phase == "Failed";
    const rapidjson::Value* spec = MemberOf(doc, "spec");
    pod.local_storage = HasEmptyDir(spec);
    pod.tolerates_cordon = ToleratesCordon(spec);
    pods.push_back(std::move(pod));
  }
  return pods;
}

Result<NodeState> KubeNodeApi::GetNode() {
  Result<KubeObject> node = client_.Get(ObjectRef{Nodes(), "", node_});
  if (!node.ok()) return node.status();
  return ParseNodeState(node->json);
}

Status KubeNodeApi::Cordon(const NodeState& seen, const std::string& key, const std::string& value,
                           const std::vector<std::string>& stale) {
  std::vector<std::pair<std::string, const std::string*>> notes{{key, &value}};
  for (const std::string& mark : stale) notes.emplace_back(mark, nullptr);
  return client_.Patch(ObjectRef{Nodes(), "", node_}, PatchType::kMerge, NodePatch(seen, notes, true, true));
}

Status KubeNodeApi::Unmark(const NodeState& seen, const std::string& key, bool uncordon) {
  return client_.Patch(ObjectRef{Nodes(), "", node_}, PatchType::kMerge,
                       NodePatch(seen, {{key, nullptr}}, uncordon, false));
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
