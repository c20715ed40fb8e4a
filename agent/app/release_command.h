// `kubectl nodehook release-finalizers --config FILE --yes` (`nodehook fleet release-finalizers`):
// the documented way out at uninstall. Stops the agents first (--stop-agents; it refuses while
// they run without it), then removes every nodehook.io/ finalizer from every object of every
// resource in the config (finalizer_release.h), so that the objects, their namespaces and the
// CRD can be deleted, and, for configs whose rollouts cordon, gives back the Nodes cordoned for
// work still going on (cordon_release.h; failed nodes kept cordoned stay so without
// --uncordon-failed). It runs no delete hook, so it says so and does nothing without --yes. The
// Helm chart runs it as a pre-delete Job.
// Connects with the user's kubeconfig (fleet's --kubeconfig, $KUBECONFIG, ~/.kube/config), or in
// cluster (the pod's service account) when there is none (kube/credentials/connection_source.h). Not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "agent/app/fleet_command.h"
#include "agent/base/clock.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct ReleaseCommandArgs {
  std::string config_path;
  bool yes = false;
  // --stop-agents NAMESPACE/DAEMONSET: delete the agents' DaemonSet and wait until its pods are
  // gone before releasing (agent_stand_down.h). Without it, the release refuses while any agent
  // pod runs in the cluster.
  std::string stop_agents{};
  int stop_timeout_seconds = 300;
  // Configs the agents ran before (--previous): their resources are released too, so finalizers
  // left on resources no longer in the config go as well.
  std::vector<std::string> previous_paths{};
  // --uncordon-failed: also give back the Nodes kept cordoned because they failed an object state.
  bool uncordon_failed = false;
};

// Adds the action under `fleet` (AddFleetCommand's result); sets fleet_args->action when chosen.
void AddReleaseCommand(CLI::App* fleet, FleetCommandArgs* fleet_args, ReleaseCommandArgs* args);

// The client for the connection described above; tests pass their own.
using ReleaseClientFactory = std::function<Result<std::unique_ptr<KubeClient>>(const FleetCommandArgs&)>;
Result<std::unique_ptr<KubeClient>> DefaultReleaseClient(const FleetCommandArgs& args);

// Exit codes: 0 released everything (or nothing was there); 1 some objects, Nodes or lists failed
// (printed), or the agents did not stop (nothing released); 2 bad config, no connection, no
// --yes, or agents still running without --stop-agents (nothing done). `clock` times the wait
// for the agents.
int RunReleaseCommand(const FleetCommandArgs& fleet_args, const ReleaseCommandArgs& args,
                      const ReleaseClientFactory& make_client, std::ostream& out, std::ostream& err,
                      Clock& clock = SystemClock::Instance());

}  // namespace nodehook
