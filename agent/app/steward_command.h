// `nodehook steward --config FILE`: the cross-node work of the agents' config (steward/steward.h),
// under the steward's own ServiceAccount, until SIGINT/SIGTERM. Runs no hook and keeps no state.
// Serves /healthz, /readyz and /metrics on tuning.health_address (its watches judged as the
// agent's are); no admin endpoint and no /v1/objects: it keeps no per-object progress.
#pragma once

#include <string>

#include "agent/base/environment.h"
#include "agent/config/config.h"

namespace nodehook {

// Returns the process exit code: 0 after a clean stop, 1 when it could not start.
// `identity` names it (its pod); `agents_namespace` is where the agent pods run ("" = judge nodes
// by their Node alone); `pod` is its own downward API (the Lease namespace's default).
int RunSteward(const Config& given, const PodEnvironment& pod, const std::string& identity,
               const std::string& agents_namespace);

}  // namespace nodehook
