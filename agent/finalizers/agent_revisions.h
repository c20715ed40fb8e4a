// Whether some agent still runs an older pod template (and so, perhaps, an older config): the
// pods of this agent's own DaemonSet (its selector; for a pod no DaemonSet controls, the pods
// alike to it, agent_pods.h) whose `controller-revision-hash` is not its own pod's. Pods of
// another DaemonSet are left out (another node pool may run another config for good). A config
// change reaches the pods as a new revision (the chart's checksum/config annotation,
// kustomize's hashed ConfigMap names), so none left means every agent alike runs it.
//
// Cost: the selector is worked out once (a GET of the own pod and of its DaemonSet); each Find()
// is one List that asks the API server for those pods only (`SELECTOR,controller-revision-hash!=
// OWN`), at most kShownOlderPods of them: a settled fleet answers with an empty list, whatever
// its size.
// Not thread-safe: one caller (the retirement's thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

inline constexpr const char* kRevisionLabel = "controller-revision-hash";
inline constexpr int kShownOlderPods = 5;

class OlderAgentPods {
 public:
  // Borrows the client, which must outlive it.
  OlderAgentPods(KubeClient& client, std::string namespace_name, std::string pod_name);

  // The names of up to kShownOlderPods such pods; empty when there is none. kInvalid when the own
  // pod carries no kRevisionLabel (nothing to compare by); the GETs' and the List's errors
  // otherwise (the selector is worked out again at the next call).
  Result<std::vector<std::string>> Find();

 private:
  Result<ResourceRef> Older();

  KubeClient& client_;
  const std::string namespace_name_;
  const std::string pod_name_;
  std::optional<ResourceRef> older_;  // the pods to look for, once known
};

}  // namespace nodehook
