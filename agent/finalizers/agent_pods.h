// Which pods are "this DaemonSet's agents": the agent reads its own pod (POD_NAMESPACE and
// POD_NAME from the downward API) and selects the pods that carry the same labels, minus the
// ones that differ between rollouts (controller-revision-hash, pod-template-generation). The
// DaemonSet's own selector is a subset of those labels, so this never selects fewer agents than
// the DaemonSet owns; it needs no read of DaemonSets (only get/list/watch of pods in the namespace).
// Thread-safe.
#pragma once

#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/kube/kube_client.h"

namespace nodehook {

// The label selector ("a=b,c=d", keys sorted) for the agent pods alike to `pod_json`.
// kInvalid when the pod has no labels that could select its peers.
Result<std::string> AgentPodSelector(const std::string& pod_json);

// The agent pods as a collection to list and watch: GETs pod `name` in `namespace_name`.
// Errors are the GET's (kNotFound, kForbidden, kUnavailable, ...) or AgentPodSelector's.
Result<ResourceRef> FindAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name);

// FindAgentPods, retried with backoff (1 s doubling to 30 s, by `clock`) while the API is
// unreachable, until `stop`. A permanent answer (404, 403, no labels) is returned at once.
Result<ResourceRef> WaitForAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name,
                                     Clock& clock, const CancelToken& stop);

}  // namespace nodehook
