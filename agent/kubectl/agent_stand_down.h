// The first step of an uninstall: the agents stand down before their finalizers are released.
// A running agent puts finalizers back as fast as they are removed (the singleton leader claims
// `nodehook.io/singleton` on every handled object, finalizer mode adds its node's on any change),
// so releasing while agents run leaves objects that no agent will ever let go. Stopping them
// means deleting their DaemonSet and waiting until every one of its pods is gone: a terminating
// pod's agent may still write until it exits. Except on a dead node (dead_node_pods.h), whose
// kubelet would never confirm its pod gone: such a pod is named and not waited for.
// Not thread-safe; one call at a time per client.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct StandDownOptions {
  std::string namespace_name;  // the DaemonSet's
  std::string daemonset;
  Duration timeout = std::chrono::seconds(300);  // for its pods to be gone
  Duration poll = std::chrono::seconds(1);
  // The API server's clock minus `clock`'s (ApiServerClock's offset), asked each round: a pod's
  // grace period ends by the server's clock. Unset: none.
  std::function<Duration()> server_offset{};
};

// Deletes the DaemonSet (already gone is fine), then lists the pods of its namespace until none
// that it controls is left to wait for; prints one line when it starts waiting, one for each pod
// on a dead node it stops waiting for (also logged, "agent pod not waited for"), and one when
// none is left. Reads the Node of a pod past its grace period and kDeadNodeMargin.
// kOk: none left. kTimeout: some still there at the deadline (the message names them).
// Otherwise the API's error (a 403 names the verb); unavailable answers are retried until the
// deadline.
Status StandDownAgents(KubeClient& client, const StandDownOptions& options, Clock& clock, std::ostream& out);

// Agent pods anywhere in the cluster: the pods labelled nodehook.io/agent (any controller), and,
// for manifests older than that label, the pods `legacy_selector` selects that a DaemonSet
// controls (not the chart's uninstall Job, which carries the chart's labels): "namespace/pod on
// node (DaemonSet namespace/name)" each, once. For a release without StandDownAgents: it refuses
// while these run.
Result<std::vector<std::string>> RunningAgents(KubeClient& client, const std::string& legacy_selector);

// The agent pods of deploy/base and the chart before they carried nodehook.io/agent.
inline constexpr const char* kAgentPodsSelector = "app.kubernetes.io/name=nodehook";

}  // namespace nodehook
