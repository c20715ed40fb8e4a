#include "agent/finalizers/agent_pods.h"

#include <rapidjson/document.h>

#include <map>
#include <vector>

#include "agent/base/log.h"
#include "agent/kube/client/transient_retry.h"

namespace nodehook {
namespace {

// Labels the DaemonSet controller sets per rollout: selecting by them would lose the agents of
// the other revision while a rollout is under way.
bool RolloutLabel(const std::string& key) {
  return key == "controller-revision-hash" || key == "pod-template-generation";
}

}  // namespace

void LogOwnPodNotRead(const std::string& pod, const Status& error, Duration wait) {
  Log(LogLevel::kWarn, "own pod not read",
      {{"pod", pod}, {"error", error.ToString()},
       {"next", "retry in " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) + "s"}});
}

Result<std::string> AgentPodSelector(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return Status(StatusCode::kInvalid, "own pod: not a JSON object");
  auto meta = doc.FindMember("metadata");
  std::map<std::string, std::string> labels;
  if (meta != doc.MemberEnd() && meta->value.IsObject()) {
    auto found = meta->value.FindMember("labels");
    if (found != meta->value.MemberEnd() && found->value.IsObject()) {
      for (auto& m : found->value.GetObject()) {
        std::string key(m.name.GetString(), m.name.GetStringLength());
        if (!m.value.IsString() || RolloutLabel(key)) continue;
        labels[key] = std::string(m.value.GetString(), m.value.GetStringLength());
      }
    }
  }
  if (labels.empty()) {
    return Status(StatusCode::kInvalid,
                  "own pod: metadata.labels has nothing to select the other agent pods by (expected the "
                  "DaemonSet's selector labels, e.g. app.kubernetes.io/name)");
  }
  std::string selector;
  for (const auto& [key, value] : labels) selector += (selector.empty() ? "" : ",") + key + "=" + value;
  return selector;
}

std::string ControllingDaemonSet(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata") || !doc["metadata"].IsObject()) return "";
  const auto& meta = doc["metadata"];
  auto owners = meta.FindMember("ownerReferences");
  if (owners == meta.MemberEnd() || !owners->value.IsArray()) return "";
  for (const auto& o : owners->value.GetArray()) {
    if (!o.IsObject()) continue;
    auto kind = o.FindMember("kind"), controller = o.FindMember("controller"), name = o.FindMember("name");
    if (kind == o.MemberEnd() || !kind->value.IsString() || std::string(kind->value.GetString()) != "DaemonSet") {
      continue;
    }
    if (controller == o.MemberEnd() || !controller->value.IsBool() || !controller->value.GetBool()) continue;
    if (name != o.MemberEnd() && name->value.IsString()) return name->value.GetString();
  }
  return "";
}

Result<std::string> DaemonSetSelector(const std::string& daemonset_json) {
  rapidjson::Document doc;
  doc.Parse(daemonset_json.c_str(), daemonset_json.size());
  const Status bad(StatusCode::kInvalid, "DaemonSet: spec.selector is missing or not a label selector");
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("spec") || !doc["spec"].IsObject()) return bad;
  auto sel = doc["spec"].FindMember("selector");
  if (sel == doc["spec"].MemberEnd() || !sel->value.IsObject()) return bad;
  std::vector<std::string> terms;
  auto labels = sel->value.FindMember("matchLabels");
  if (labels != sel->value.MemberEnd() && labels->value.IsObject()) {
    std::map<std::string, std::string> sorted;
    for (auto& m : labels->value.GetObject()) {
      if (m.value.IsString()) sorted[m.name.GetString()] = m.value.GetString();
    }
    for (const auto& [k, v] : sorted) terms.push_back(k + "=" + v);
  }
  auto exprs = sel->value.FindMember("matchExpressions");
  if (exprs != sel->value.MemberEnd() && exprs->value.IsArray()) {
    for (const auto& e : exprs->value.GetArray()) {
      if (!e.IsObject() || !e.HasMember("key") || !e["key"].IsString() || !e.HasMember("operator") ||
          !e["operator"].IsString()) {
        return bad;
      }
      std::string key = e["key"].GetString(), op = e["operator"].GetString(), values;
      if (e.HasMember("values") && e["values"].IsArray()) {
        for (const auto& v : e["values"].GetArray()) {
          if (v.IsString()) values += (values.empty() ? "" : ",") + std::string(v.GetString());
        }
      }
      if (op == "In") terms.push_back(key + " in (" + values + ")");
      else if (op == "NotIn") terms.push_back(key + " notin (" + values + ")");
      else if (op == "Exists") terms.push_back(key);
      else if (op == "DoesNotExist") terms.push_back("!" + key);
      else return bad;
    }
  }
  // An empty selector would select every pod in the namespace: refuse it rather than guess.
  if (terms.empty()) return bad;
  std::string out;
  for (const auto& t : terms) out += (out.empty() ? "" : ",") + t;
  return out;
}

bool LabelledAgentPod(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return false;
  auto labels = meta->value.FindMember("labels");
  return labels != meta->value.MemberEnd() && labels->value.IsObject() && labels->value.HasMember(kAgentPodLabel);
}

Result<std::string> OwnDaemonSetSelector(KubeClient& client, const std::string& namespace_name,
                                         const std::string& pod_json) {
  std::string daemonset = ControllingDaemonSet(pod_json);
  if (daemonset.empty()) return AgentPodSelector(pod_json);
  auto owner =
      client.Get(ObjectRef{ResourceRef{"apps", "v1", "daemonsets", namespace_name, ""}, namespace_name, daemonset});
  if (!owner.ok()) return owner.status();
  return DaemonSetSelector(owner->json);
}

Result<ResourceRef> FindAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name) {
  auto pod = client.Get(ObjectRef{ResourceRef{"", "v1", "pods", namespace_name, ""}, namespace_name, name});
  if (!pod.ok()) return pod.status();
  if (LabelledAgentPod(pod->json)) return ResourceRef{"", "v1", "pods", namespace_name, kAgentPodLabel};
  Result<std::string> selector = OwnDaemonSetSelector(client, namespace_name, pod->json);
  if (!selector.ok()) return selector.status();
  return ResourceRef{"", "v1", "pods", namespace_name, *selector};
}

Result<ResourceRef> WaitForAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name,
                                     Clock& clock, const CancelToken& stop) {
  return RetryWhileTransient<ResourceRef>(
      [&] { return FindAgentPods(client, namespace_name, name); }, clock, stop,
      [&](const Status& error, Duration wait) { LogOwnPodNotRead(namespace_name + "/" + name, error, wait); });
}

}  // namespace nodehook
