// Whether every agent still runs an older pod template (and so, perhaps, an older config): the
// agent pods alike to this agent's own pod (agent_pods.h) whose `controller-revision-hash`
// differs from its own. Pods of another DaemonSet are left out (another node pool may run
// another config for good); pods that no DaemonSet controls (run by hand, tests) are compared
// as they are. A config change reaches the pods as a new revision (the chart's checksum/config
// annotation, kustomize's hashed ConfigMap names), so none left means every agent alike runs it.
// Free function; thread-safe when the client is.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

inline constexpr const char* kRevisionLabel = "controller-revision-hash";

// The names of those pods ("" revision counts as another). kInvalid when the own pod carries no
// kRevisionLabel (nothing to compare by); the GETs' and the List's errors otherwise.
Result<std::vector<std::string>> PodsOnOtherRevisions(KubeClient& client, const std::string& namespace_name,
                                                      const std::string& pod_name);

}  // namespace nodehook
