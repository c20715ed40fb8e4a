// Registers the agent's standard local endpoints on a LocalServer:
//   GET /healthz  liveness (CheckLiveness), 200 or 503, text
//   GET /readyz   readiness (CheckReadiness, with `problems`' lines), 200 or 503, text
//   GET /metrics  Prometheus text from `metrics`
// `snapshot` is called on the server thread for every probe: it must be quick and thread-safe.
// `clock` and `metrics` must outlive the server.
#pragma once

#include <functional>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/http/health.h"
#include "agent/http/local_server.h"

namespace nodehook {

using HealthSnapshot = std::function<std::vector<WatchHealth>()>;
// What besides the watches keeps the agent from being ready, one line each (quick, thread-safe).
using ReadinessProblems = std::function<std::vector<std::string>()>;

void RegisterStandardEndpoints(LocalServer& server, const HealthSnapshot& snapshot, Clock& clock, HealthBounds bounds,
                               Metrics& metrics, const ReadinessProblems& problems = nullptr);

}  // namespace nodehook
