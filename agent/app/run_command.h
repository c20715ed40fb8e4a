// `nodehook run`: builds the real adapters (cpprest transport, SQLite store, process runner)
// from a validated Config and runs the Agent until SIGINT/SIGTERM.
#pragma once

#include <optional>

#include "agent/base/cancel.h"
#include "agent/base/environment.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/http_transport.h"

namespace nodehook {

// Returns the process exit code: 0 after a clean stop, 1 when the agent could not start.
// `pod`: the downward API, read once by main (its own pod, for the election, the drain and the
// agent pods).
int RunAgent(const Config& given, const PodEnvironment& pod);

// Whether the CRDs of the resources with a ready_condition keep it (readiness/crd_status_check.h),
// asked by whoever writes the conditions; logs "config refused" when not. False too when `stop`
// came first.
bool ReadyConditionsKept(const Config& config, KubeClient& client, const CancelToken& stop);

// Loads the API connection the config names (kubeconfig or in-cluster files), as `run` would;
// what `check-config` reports.
Status CheckConnection(const Config& config);

// The process-wide settings of the config (log level and format, heap arenas): before anything logs.
void ConfigureProcess(const Config& config);
// The API connection and, for cluster-singleton resources, the Lease's namespace (into `config`):
// both known before any waiting, or nullopt after logging why. `run` and `steward` share it.
std::optional<TransportConfig> Connect(Config& config, const PodEnvironment& pod);

}  // namespace nodehook
