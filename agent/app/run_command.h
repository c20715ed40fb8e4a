// `nodehook run`: builds the real adapters (cpprest transport, SQLite store, process runner)
// from a validated Config and runs the Agent until SIGINT/SIGTERM.
#pragma once

#include "agent/config/config.h"

namespace nodehook {

// Returns the process exit code: 0 after a clean stop, 1 when the agent could not start.
int RunAgent(const Config& given);

// Loads the API connection the config names (kubeconfig or in-cluster files), as `run` would;
// what `check-config` reports.
Status CheckConnection(const Config& config);

}  // namespace nodehook
