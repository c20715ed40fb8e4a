// KubeNodeApi: NodeApi over the KubeClient, for one Node. A cordon is one merge patch of the Node
// carrying its resourceVersion (spec.unschedulable and the mark together); an eviction is a POST
// of a policy/v1 Eviction to pods/<name>/eviction with the pod's uid as precondition, so a pod
// that was replaced under the same name is never evicted in its predecessor's stead.
// Thread-safe (the client is); borrows the client.
#pragma once

#include <string>

#include "agent/kube/client/kube_client.h"
#include "agent/nodework/node_api.h"

namespace nodehook {

class KubeNodeApi final : public NodeApi {
 public:
  KubeNodeApi(KubeClient& client, std::string node) : client_(client), node_(std::move(node)) {}

  Result<NodeState> GetNode() override;
  Status Cordon(const NodeState& seen, const std::string& key, const std::string& value,
                const std::vector<std::string>& stale) override;
  Status Unmark(const NodeState& seen, const std::string& key, bool uncordon) override;
  Result<std::vector<PodOnNode>> Pods(const std::string& selector) override;
  Status Evict(const PodOnNode& pod, int grace_period_seconds) override;

 private:
  KubeClient& client_;
  const std::string node_;
};

// The Node's state and a pod's facts from their JSON (exposed for tests).
Result<NodeState> ParseNodeState(const std::string& json);
Result<std::vector<PodOnNode>> ParsePods(const std::vector<std::string>& pod_json);

}  // namespace nodehook
