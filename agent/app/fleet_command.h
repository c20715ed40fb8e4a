// `nodehook fleet [status|failing]`, shipped as the kubectl plugin `kubectl nodehook` (the same
// binary installed as kubectl-nodehook; main.cc maps that name to `fleet`). Run from a laptop:
// it reads the user's kubeconfig (--kubeconfig, else $KUBECONFIG, else ~/.kube/config:
// kube/credentials/connection_source.h), lists the agent pods and asks each for GET /v1/objects
// through the API server's pod proxy (fleet_source.h), then prints the fleet table or the failing
// handlers (fleet_report.h).
// Not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "agent/base/clock.h"
#include "agent/kubectl/fleet_source.h"

namespace nodehook {

struct FleetCommandArgs {
  std::string action = "status";  // "status", "failing" or "release-finalizers" (release_command.h)
  std::string kubeconfig;         // --kubeconfig, else $KUBECONFIG, else ~/.kube/config
  FleetTarget target;
  int limit = 500;       // objects per node
  int parallel = 16;     // agents asked at once
  int timeout_seconds = 10;
};

CLI::App* AddFleetCommand(CLI::App& app, FleetCommandArgs* args);

// Builds the source from the kubeconfig; tests pass their own.
using FleetSourceFactory = std::function<Result<std::unique_ptr<FleetSource>>(const FleetCommandArgs&)>;
Result<std::unique_ptr<FleetSource>> KubeconfigFleetSource(const FleetCommandArgs& args);

// Exit codes: 0 every agent answered; 3 some did not (listed in the output); 1 the pods could
// not be listed or none matched; 2 no usable kubeconfig.
int RunFleetCommand(const FleetCommandArgs& args, const FleetSourceFactory& make_source, std::ostream& out,
                    std::ostream& err, const Clock& clock);

// "kubectl-nodehook ARGS" as "nodehook fleet ARGS": true when argv[0]'s file name is the plugin's.
bool InvokedAsKubectlPlugin(const char* argv0);

}  // namespace nodehook
