#include "agent/finalizers/agent_revisions.h"

#include <rapidjson/document.h>

#include <utility>

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

OlderAgentPods::OlderAgentPods(KubeClient& client, std::string namespace_name, std::string pod_name)
    : client_(client), namespace_name_(std::move(namespace_name)), pod_name_(std::move(pod_name)) {}

Result<ResourceRef> OlderAgentPods::Older() {
  if (older_) return *older_;
  ResourceRef pods{"", "v1", "pods", namespace_name_, ""};
  Result<KubeObject> own = client_.Get(ObjectRef{pods, namespace_name_, pod_name_});
  if (!own.ok()) return own.status();
  const std::string revision = Label(own->json, kRevisionLabel);
  if (revision.empty()) {
    return InvalidError("own pod " + namespace_name_ + "/" + pod_name_ + " has no " + kRevisionLabel +
                        " label: cannot tell which agents run an older pod template");
  }
  Result<std::string> selector = OwnDaemonSetSelector(client_, namespace_name_, own->json);
  if (!selector.ok()) return selector.status();
  // A pod without the label matches `!=` too: it might run anything.
  pods.label_selector = *selector + "," + kRevisionLabel + "!=" + revision;
  older_ = pods;
  return pods;
}

Result<std::vector<std::string>> OlderAgentPods::Find() {
  Result<ResourceRef> older = Older();
  if (!older.ok()) return older.status();
  ListOptions options;
  options.limit = kShownOlderPods;
  Result<ObjectList> page = client_.List(*older, options);
  if (!page.ok()) return page.status();
  std::vector<std::string> names;
  for (const KubeObject& pod : page->items) names.push_back(pod.meta.name);
  // A pod that cannot be read might run anything: count it.
  for (const BadObject& bad : page->quarantined) names.push_back(bad.meta.name);
  return names;
}

}  // namespace nodehook
