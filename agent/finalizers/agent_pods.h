// Which pods are agents: the agent reads its own pod (POD_NAMESPACE and POD_NAME from the
// downward API). A pod labelled kAgentPodLabel (what the shipped manifests and the chart put on
// agent pods) selects every pod in its namespace that carries that label, whichever DaemonSet
// runs it: two DaemonSets on two node pools, a DaemonSet recreated to change its selector, and
// two releases count each other's nodes as served, and the uninstall Job (not labelled) counts for
// none. Without the label (older manifests): the DaemonSet that controls the pod, by its selector
// (immutable, so pods of every revision match it); a pod without a controlling DaemonSet (run by
// hand, a test) selects the pods that carry its own labels, minus the ones that differ between
// rollouts (controller-revision-hash, pod-template-generation).
// Thread-safe.
#pragma once

#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

// On every agent pod: it says what the pod is (a nodehook agent, which may hold per-node
// finalizers), not which DaemonSet runs it. Any value.
inline constexpr const char* kAgentPodLabel = "nodehook.io/agent";
// Whether the pod carries kAgentPodLabel.
bool LabelledAgentPod(const std::string& pod_json);

// The label selector ("a=b,c=d", keys sorted) for the agent pods alike to `pod_json`.
// kInvalid when the pod has no labels that could select its peers.
Result<std::string> AgentPodSelector(const std::string& pod_json);
// The name of the DaemonSet that controls the pod (its controller ownerReference); "" if none.
std::string ControllingDaemonSet(const std::string& pod_json);
// A DaemonSet's spec.selector as a label selector string (matchLabels and matchExpressions).
Result<std::string> DaemonSetSelector(const std::string& daemonset_json);

// The label selector of the pods of the DaemonSet that controls `pod_json` (GETs that DaemonSet
// in `namespace_name`), or, for a pod no DaemonSet controls, AgentPodSelector(pod_json).
Result<std::string> OwnDaemonSetSelector(KubeClient& client, const std::string& namespace_name,
                                         const std::string& pod_json);

// The agent pods as a collection to list and watch: GETs pod `name` in `namespace_name`, and its
// DaemonSet. Errors are the GETs' (kNotFound, kForbidden, kUnavailable, ...) or the selectors'.
Result<ResourceRef> FindAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name);

// The warning while the own pod cannot be read yet ("own pod not read"), before a wait.
void LogOwnPodNotRead(const std::string& pod, const Status& error, Duration wait);

// FindAgentPods, retried with backoff (1 s doubling to 30 s, by `clock`) while the API is
// unreachable, until `stop`. A permanent answer (404, 403, no labels) is returned at once.
Result<ResourceRef> WaitForAgentPods(KubeClient& client, const std::string& namespace_name, const std::string& name,
                                     Clock& clock, const CancelToken& stop);

}  // namespace nodehook
