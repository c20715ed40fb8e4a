#include "agent/app/steward_command.h"

#include "agent/app/health_service.h"
#include "agent/app/run_command.h"
#include "agent/app/signal_watcher.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/http/endpoints.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/steward/steward.h"

namespace nodehook {
namespace {

// /healthz, /readyz and /metrics on tuning.health_address, judged by the steward's watches the
// way the agent's are (http/health.h), so a Deployment's probes mean the same. Null when the
// address is "" (off); kInvalid for a malformed one.
Result<std::unique_ptr<KeptServer>> ServeProbes(const Config& config, const Steward& steward) {
  const std::string& address = config.tuning.health_address;
  if (address.empty()) return std::unique_ptr<KeptServer>();
  auto options = ServerOptions("health_address", address, "probe");
  if (!options.ok()) return options.status();
  HealthBounds bounds{std::chrono::seconds(config.tuning.health_stale_seconds)};
  return KeptServer::Start("health endpoints", address, *options, [&steward, bounds](LocalServer& s) {
    RegisterStandardEndpoints(s, [&steward] { return steward.HealthSnapshot(); }, SystemClock::Instance(), bounds,
                              DefaultMetrics());
  });
}

}  // namespace

int RunSteward(const Config& given, const PodEnvironment& pod, const std::string& identity,
               const std::string& agents_namespace) {
  Config config = given;
  ConfigureProcess(config);
  SignalWatcher signals;  // before any thread starts: only its thread sees SIGINT/SIGTERM
  RegisterProcessMetrics(DefaultMetrics(), NODEHOOK_VERSION);
  if (config.tuning.cross_node_writes != "steward") {
    Log(LogLevel::kWarn, "steward beside agents that write across nodes",
        {{"cross_node_writes", config.tuning.cross_node_writes},
         {"next", "work alongside them; set tuning.cross_node_writes to steward so only the steward does it"}});
  }
  std::optional<TransportConfig> connection = Connect(config, pod);
  if (!connection) return 1;
  RestKubeClient client(NewCpprestTransport(std::move(*connection)),
                        ObjectLimits{config.tuning.max_object_depth, static_cast<size_t>(config.tuning.max_object_bytes)},
                        &DefaultMetrics());
  if (!ReadyConditionsKept(config, client, signals.stop())) return signals.stop().cancelled() ? 0 : 2;
  Steward steward(config, client, StewardOptions{identity, agents_namespace});
  auto probes = ServeProbes(config, steward);
  if (!probes.ok()) {
    Log(LogLevel::kError, "cannot serve local endpoints",
        {{"health_address", config.tuning.health_address}, {"error", probes.status().ToString()}, {"next", "exit 1"}});
    return 1;
  }
  steward.Run(signals.stop());
  return 0;
}

}  // namespace nodehook
