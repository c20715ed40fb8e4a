// `kubectl nodehook rollout status|plan|pause|resume OBJECT [-n NS]` and
// `kubectl nodehook wait OBJECT [-n NS] --timeout D` (under `nodehook fleet`).
// OBJECT is spelled as kubectl does, RESOURCE[.GROUP]/NAME (object_spec.h).
//   status, plan   read-only: the rollout Leases in the agents' namespace, the object, the Nodes
//                  (rollout_view.h, rollout_report.h);
//   pause          merge-patches the object's annotation nodehook.io/rollout-paused: "true";
//   resume         removes it, and sets nodehook.io/rollout-resume to the object's current state
//                  digest, so a halted state continues;
//   wait           polls (every --poll, 1 s) until every node that handles the object has
//                  handled its current state (kubectl/object_wait.h): from the Leases for a
//                  resource with a rollout policy (or, while they are not complete, the agents),
//                  else from the agents through the fleet survey.
// Exit codes: 0 ok / done; 1 object or rollout not found (or the API refused); 2 bad kubeconfig
// or arguments; 4 wait timed out; 5 wait: the rollout halted. The clock and the sleep are
// injected, so tests run a wait instantly. Not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "agent/app/fleet_command.h"
#include "agent/base/clock.h"
#include "agent/kubectl/object_wait.h"
#include "agent/kubectl/rollout_cluster.h"
#include "agent/kubectl/rollout_view.h"

namespace nodehook {

struct RolloutCommandArgs {
  std::string object;            // RESOURCE[.GROUP]/NAME
  std::string object_namespace;  // -n
  std::string agents_namespace;  // --agents-namespace; "" = the fleet's --namespace (nodehook)
  std::string timeout = "5m";    // wait --timeout
  int poll_ms = 1000;            // wait --poll-ms
  bool stop_nodes = false;       // pause --stop-nodes: the nodes inside stop too (kRolloutStopNodes)
};

// Adds `rollout status|plan|pause|resume` and `wait` under `fleet`; the chosen one is set as
// fleet_args->action ("rollout-status", ..., "wait").
void AddRolloutCommands(CLI::App* fleet, FleetCommandArgs* fleet_args, RolloutCommandArgs* args);
bool IsRolloutAction(const std::string& action);

struct RolloutDeps {
  // The agents' namespace comes as the second argument.
  std::function<Result<std::unique_ptr<RolloutCluster>>(const FleetCommandArgs&, const std::string&)> cluster;
  FleetSourceFactory fleet;  // wait without a policy asks the agents
  const Clock* clock = nullptr;
  // Now by the API server's clock (the Date of its latest answer), by which slots, soaks and
  // windows are judged; empty: `clock` (tests).
  std::function<int64_t()> server_now_ms;
  std::function<void(Duration)> sleep;
  WindowJudge windows = KubectlWindowNow;
};
// The kubeconfig-backed dependencies (and the system clock, the API server's, and sleep).
RolloutDeps KubeconfigRolloutDeps();

int RunRolloutCommand(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args, const RolloutDeps& deps,
                      std::ostream& out, std::ostream& err);

}  // namespace nodehook
