// RolloutCluster: what `kubectl nodehook rollout|wait` asks of the API server, as one seam (tests
// fake it): the rollout Leases in the agents' namespace, the object, the Nodes' labels (holds), a
// group's preferred version, the cordoned Nodes, and the one write, a merge patch of the object (pause, resume).
// KubeRolloutCluster talks through a KubeClient and a raw HttpTransport (discovery) to the same
// API server. Implementations are thread-safe if their client is.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/client/kube_client.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {

using NodeLabelMap = std::map<std::string, std::map<std::string, std::string>>;  // node -> labels

class RolloutCluster {
 public:
  virtual ~RolloutCluster() = default;
  // Every Lease labelled nodehook.io/rollout in the agents' namespace, parsed; Leases that do
  // not parse are skipped (an agent of another version may write more).
  virtual Result<std::vector<RolloutLease>> ListRolloutLeases() = 0;
  virtual Result<KubeObject> GetObject(const ObjectRef& ref) = 0;
  virtual Result<NodeLabelMap> NodeLabels() = 0;
  // The cordoned Nodes (spec.unschedulable=true): those a rollout keeps cordoned count against its
  // max_nodes (rollout/rules/rollout_cordons.h).
  virtual Result<std::vector<KubeObject>> CordonedNodes() = 0;
  // GET /apis/GROUP: its preferredVersion ("v1" for the core group "").
  virtual Result<std::string> PreferredVersion(const std::string& group) = 0;
  virtual Status MergePatchObject(const ObjectRef& ref, const std::string& body) = 0;
};

std::unique_ptr<RolloutCluster> NewKubeRolloutCluster(std::unique_ptr<KubeClient> client,
                                                      std::unique_ptr<HttpTransport> raw,
                                                      std::string agents_namespace);

// The labels of each Node in a NodeList page's items (exposed for tests).
Result<NodeLabelMap> ParseNodeLabels(const std::vector<KubeObject>& nodes);

}  // namespace nodehook
