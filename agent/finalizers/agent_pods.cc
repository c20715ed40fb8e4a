#include "agent/finalizers/agent_pods.h"

#include <rapidjson/document.h>

#include <condition_variable>
#include <algorithm>
#include <map>
#include <mutex>

#include "agent/base/log.h"

namespace nodehook {
namespace {

// Labels the DaemonSet controller sets per rollout: selecting by them would lose the agents of
// the other revision while a rollout is under way.
bool RolloutLabel(const std::string& key) {
  return key == "controller-revision-hash" || key == "pod-template-generation";
}

bool Transient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kTimeout || code == StatusCode::kTooManyRequests ||
         code == StatusCode::kUnauthorized;  // a rotating token: re-read by the client
}

}  // namespace

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

Result<ResourceRef> FindAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name) {
  auto pod = client.Get(ObjectRef{ResourceRef{"", "v1", "pods", namespace_name, ""}, namespace_name, name});
  if (!pod.ok()) return pod.status();
  auto selector = AgentPodSelector(pod->json);
  if (!selector.ok()) return selector.status();
  return ResourceRef{"", "v1", "pods", namespace_name, *selector};
}

Result<ResourceRef> WaitForAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name,
                                     Clock& clock, const CancelToken& stop) {
  std::mutex mu;
  std::condition_variable cv;
  CancelRegistration wake(stop, [&] {
    std::lock_guard<std::mutex> lock(mu);
    cv.notify_all();
  });
  Duration wait = std::chrono::seconds(1);
  for (;;) {
    auto pods = FindAgentPods(client, namespace_name, name);
    if (pods.ok() || !Transient(pods.status().code())) return pods;
    Log(LogLevel::kWarn, "own pod not read",
        {{"pod", namespace_name + "/" + name}, {"error", pods.status().ToString()},
         {"next", "retry in " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(wait).count()) + "s"}});
    std::unique_lock<std::mutex> lock(mu);
    clock.WaitUntil(cv, lock, clock.Now() + wait, [&] { return stop.cancelled(); });
    if (stop.cancelled()) return Status(StatusCode::kCancelled, "stopped while reading the own pod");
    wait = std::min<Duration>(wait * 2, std::chrono::seconds(30));
  }
}

}  // namespace nodehook
