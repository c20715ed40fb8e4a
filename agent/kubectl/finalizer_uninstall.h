// The uninstall `kubectl nodehook release-finalizers` does, once its configs are read: which
// resources and cordoning rollouts it covers (AddToUninstall), what it would do (DescribeUninstall,
// without --yes), and doing it (Uninstall): stop the agents first or refuse while they run
// (agent_stand_down.h), remove every nodehook.io/ finalizer (finalizer_release.h), give back the
// rollouts' cordons (cordon_release.h), and report the totals. No delete hook runs, and each
// step says so. Not thread-safe (one call).
#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct UninstallScope {
  std::vector<ResourceRef> resources;  // each once, in config order
  std::set<std::string> cordoning;     // the rollouts whose node steps cordon (RolloutIdOf)
};
// Adds `config`'s resources (those already in `scope` once) and its cordoning rollouts.
void AddToUninstall(const Config& config, UninstallScope* scope);

struct UninstallOptions {
  // NAMESPACE/DAEMONSET: delete the agents' DaemonSet and wait until its pods are gone before
  // releasing. "": refuse while any agent pod runs in the cluster.
  std::string stop_agents;
  Duration stop_timeout = std::chrono::seconds(300);
  // Also give back the Nodes kept cordoned because they failed an object state.
  bool uncordon_failed = false;
};

// What Uninstall would do, on `err`, ending with "Nothing was changed.".
void DescribeUninstall(const UninstallScope& scope, const UninstallOptions& options, std::ostream& err);

// Exit codes: 0 released everything (or nothing was there); 1 some objects, Nodes or lists failed
// (printed), or the agents did not stop (nothing released); 2 agents still running without
// stop_agents (nothing done). `clock` times the wait for the agents.
int Uninstall(KubeClient& client, const UninstallScope& scope, const UninstallOptions& options, Clock& clock,
              std::ostream& out, std::ostream& err);

}  // namespace nodehook
