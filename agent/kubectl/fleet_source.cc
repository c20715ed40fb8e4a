#include "agent/kubectl/fleet_source.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <rapidjson/document.h>

#include "agent/kube/client/api_errors.h"

namespace nodehook {
namespace {

// An agent's answer is bounded by its limit; this only stops a confused proxy from exhausting us.
constexpr size_t kMaxAnswerBytes = size_t{64} << 20;

std::string Field(const rapidjson::Value& doc, const char* section, const char* key) {
  auto s = doc.FindMember(section);
  if (s == doc.MemberEnd() || !s->value.IsObject()) return "";
  auto v = s->value.FindMember(key);
  return v != s->value.MemberEnd() && v->value.IsString() ? std::string(v->value.GetString(), v->value.GetStringLength())
                                                           : "";
}

class KubeFleetSource final : public FleetSource {
 public:
  KubeFleetSource(std::unique_ptr<KubeClient> client, std::unique_ptr<HttpTransport> proxy, FleetTarget target)
      : client_(std::move(client)), proxy_(std::move(proxy)), target_(std::move(target)) {}

  Result<std::vector<AgentPod>> ListAgents() override {
    ResourceRef pods{"", "v1", "pods", target_.namespace_name, target_.label_selector};
    Result<ObjectList> listed = ListAll(*client_, pods);
    if (!listed.ok()) {
      return Status(listed.status().code(), "listing agent pods in namespace " + target_.namespace_name + " (-l " +
                                                target_.label_selector + "): " + listed.status().message());
    }
    std::vector<AgentPod> out;
    for (const KubeObject& item : listed->items) {
      Result<AgentPod> pod = ParseAgentPod(item.json);
      if (pod.ok()) out.push_back(std::move(pod).value());
    }
    std::sort(out.begin(), out.end(),
              [](const AgentPod& a, const AgentPod& b) { return std::tie(a.node, a.name) < std::tie(b.node, b.name); });
    return out;
  }

  Result<std::string> Ask(const AgentPod& pod, const std::string& path) override {
    HttpRequest req;
    req.path_and_query = PodProxyPath(target_.namespace_name, pod.name, target_.port, path);
    req.headers.emplace_back("Accept", "application/json");
    req.max_body_bytes = kMaxAnswerBytes;
    Result<HttpResponse> resp = proxy_->Send(req);
    if (!resp.ok()) return resp.status();
    if (resp->status != 200) return ErrorFromResponse(*resp, "GET " + path);
    return std::move(resp->body);
  }

 private:
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<HttpTransport> proxy_;
  const FleetTarget target_;
};

}  // namespace

std::string PodProxyPath(const std::string& namespace_name, const std::string& pod, int port, const std::string& path) {
  return "/api/v1/namespaces/" + namespace_name + "/pods/" + pod + ":" + std::to_string(port) + "/proxy" + path;
}

Result<AgentPod> ParseAgentPod(const std::string& json) {
  rapidjson::Document doc;
  if (doc.Parse(json.c_str(), json.size()).HasParseError() || !doc.IsObject()) {
    return InvalidError("not a Pod: the JSON does not parse");
  }
  AgentPod pod;
  pod.name = Field(doc, "metadata", "name");
  if (pod.name.empty()) return InvalidError("not a Pod: no metadata.name");
  pod.node = Field(doc, "spec", "nodeName");
  pod.ip = Field(doc, "status", "podIP");
  pod.phase = Field(doc, "status", "phase");
  return pod;
}

std::unique_ptr<FleetSource> NewKubeFleetSource(std::unique_ptr<KubeClient> client,
                                                std::unique_ptr<HttpTransport> proxy, FleetTarget target) {
  return std::make_unique<KubeFleetSource>(std::move(client), std::move(proxy), std::move(target));
}

}  // namespace nodehook
