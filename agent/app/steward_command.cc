#include "agent/app/steward_command.h"

#include "agent/app/run_command.h"
#include "agent/app/signal_watcher.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/steward/steward.h"

namespace nodehook {

int RunSteward(const Config& given, const std::string& identity, const std::string& agents_namespace) {
  Config config = given;
  ConfigureProcess(config);
  SignalWatcher signals;  // before any thread starts: only its thread sees SIGINT/SIGTERM
  RegisterProcessMetrics(DefaultMetrics(), NODEHOOK_VERSION);
  if (config.tuning.cross_node_writes != "steward") {
    Log(LogLevel::kWarn, "steward beside agents that write across nodes",
        {{"cross_node_writes", config.tuning.cross_node_writes},
         {"next", "work alongside them; set tuning.cross_node_writes to steward so only the steward does it"}});
  }
  std::optional<TransportConfig> connection = Connect(config);
  if (!connection) return 1;
  RestKubeClient client(NewCpprestTransport(std::move(*connection)),
                        ObjectLimits{config.tuning.max_object_depth, static_cast<size_t>(config.tuning.max_object_bytes)},
                        &DefaultMetrics());
  Steward steward(config, client, StewardOptions{identity, agents_namespace});
  steward.Run(signals.stop());
  return 0;
}

}  // namespace nodehook
