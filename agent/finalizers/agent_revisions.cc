#include "agent/finalizers/agent_revisions.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"
#include "agent/finalizers/agent_pods.h"

namespace nodehook {
namespace {

std::string Label(const std::string& pod_json, const char* key) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return "";
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return "";
  auto labels = meta->value.FindMember("labels");
  if (labels == meta->value.MemberEnd()) return "";
  return StringMember(labels->value, key);
}

}  // namespace

Result<std::vector<std::string>> PodsOnOtherRevisions(KubeClient& client, const std::string& namespace_name,
                                                      const std::string& pod_name) {
  ResourceRef pods_ref{"", "v1", "pods", namespace_name, ""};
  Result<KubeObject> own = client.Get(ObjectRef{pods_ref, namespace_name, pod_name});
  if (!own.ok()) return own.status();
  const std::string revision = Label(own->json, kRevisionLabel);
  if (revision.empty()) {
    return InvalidError("own pod " + namespace_name + "/" + pod_name + " has no " + kRevisionLabel +
                        " label: cannot tell which agents run an older pod template");
  }
  const std::string daemonset = ControllingDaemonSet(own->json);
  Result<ResourceRef> alike = FindAgentPods(client, namespace_name, pod_name);
  if (!alike.ok()) return alike.status();
  std::vector<std::string> others;
  ListOptions options;
  do {
    Result<ObjectList> page = client.List(*alike, options);
    if (!page.ok()) return page.status();
    for (const KubeObject& pod : page->items) {
      if (ControllingDaemonSet(pod.json) != daemonset) continue;
      if (Label(pod.json, kRevisionLabel) != revision) others.push_back(pod.meta.name);
    }
    // A pod that cannot be read might run anything: count it.
    for (const BadObject& bad : page->quarantined) others.push_back(bad.meta.name);
    options.continue_token = page->continue_token;
  } while (!options.continue_token.empty());
  return others;
}

}  // namespace nodehook
