#include "agent/kubectl/rollout_cluster.h"

#include <rapidjson/document.h>

#include <utility>

#include "agent/kube/client/api_errors.h"
#include "agent/rollout/rules/rollout_cordons.h"

namespace nodehook {
namespace {

class KubeRolloutCluster final : public RolloutCluster {
 public:
  KubeRolloutCluster(std::unique_ptr<KubeClient> client, std::unique_ptr<HttpTransport> raw, std::string ns)
      : client_(std::move(client)), raw_(std::move(raw)), namespace_(std::move(ns)) {}

  Result<std::vector<RolloutLease>> ListRolloutLeases() override {
    ResourceRef leases{"coordination.k8s.io", "v1", "leases", namespace_, kRolloutLabel};
    Result<ObjectList> listed = ListAll(*client_, leases);
    if (!listed.ok()) {
      return Status(listed.status().code(), "listing rollout Leases in namespace " + namespace_ + " (-l " +
                                                kRolloutLabel + "): " + listed.status().message());
    }
    std::vector<RolloutLease> out;
    for (const KubeObject& item : listed->items) {
      Result<RolloutLease> lease = ParseRolloutLease(item.json);
      if (lease.ok()) out.push_back(std::move(lease).value());
    }
    return out;
  }

  Result<KubeObject> GetObject(const ObjectRef& ref) override { return client_->Get(ref); }

  Result<NodeLabelMap> NodeLabels() override {
    Result<ObjectList> listed = ListAll(*client_, ResourceRef{"", "v1", "nodes", "", ""});
    if (!listed.ok()) return Status(listed.status().code(), "listing nodes: " + listed.status().message());
    return ParseNodeLabels(listed->items);
  }

  Result<std::vector<KubeObject>> CordonedNodes() override {
    Result<ObjectList> listed = ListAll(*client_, CordonedNodesResource());
    if (!listed.ok()) return Status(listed.status().code(), "listing cordoned nodes: " + listed.status().message());
    return std::move(listed->items);
  }

  Result<std::string> PreferredVersion(const std::string& group) override {
    if (group.empty()) return std::string("v1");
    HttpRequest req;
    req.path_and_query = "/apis/" + group;
    req.headers.emplace_back("Accept", "application/json");
    req.max_body_bytes = size_t{1} << 20;
    Result<HttpResponse> resp = raw_->Send(req);
    if (!resp.ok()) return resp.status();
    if (resp->status != 200) return ErrorFromResponse(*resp, "GET /apis/" + group);
    rapidjson::Document doc;
    doc.Parse(resp->body.c_str(), resp->body.size());
    if (doc.HasParseError() || !doc.IsObject()) return InvalidError("GET /apis/" + group + ": not a JSON object");
    auto preferred = doc.FindMember("preferredVersion");
    if (preferred != doc.MemberEnd() && preferred->value.IsObject()) {
      auto version = preferred->value.FindMember("version");
      if (version != preferred->value.MemberEnd() && version->value.IsString()) return std::string(version->value.GetString());
    }
    return InvalidError("GET /apis/" + group + ": no preferredVersion.version");
  }

  Status MergePatchObject(const ObjectRef& ref, const std::string& body) override {
    return client_->Patch(ref, PatchType::kMerge, body);
  }

 private:
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<HttpTransport> raw_;
  const std::string namespace_;
};

}  // namespace

Result<NodeLabelMap> ParseNodeLabels(const std::vector<KubeObject>& nodes) {
  NodeLabelMap out;
  for (const KubeObject& node : nodes) {
    rapidjson::Document doc;
    doc.Parse(node.json.c_str(), node.json.size());
    if (doc.HasParseError() || !doc.IsObject()) return InvalidError("node " + node.meta.name + ": not a JSON object");
    auto& labels = out[node.meta.name];
    auto meta = doc.FindMember("metadata");
    if (meta == doc.MemberEnd() || !meta->value.IsObject()) continue;
    auto l = meta->value.FindMember("labels");
    if (l == meta->value.MemberEnd() || !l->value.IsObject()) continue;
    for (auto it = l->value.MemberBegin(); it != l->value.MemberEnd(); ++it) {
      if (it->value.IsString()) labels[it->name.GetString()] = it->value.GetString();
    }
  }
  return out;
}

std::unique_ptr<RolloutCluster> NewKubeRolloutCluster(std::unique_ptr<KubeClient> client,
                                                      std::unique_ptr<HttpTransport> raw,
                                                      std::string agents_namespace) {
  return std::make_unique<KubeRolloutCluster>(std::move(client), std::move(raw), std::move(agents_namespace));
}

}  // namespace nodehook
