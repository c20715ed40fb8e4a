#include "agent/app/release_command.h"

#include "agent/config/config.h"
#include "agent/kubectl/finalizer_uninstall.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook release-finalizers";

}  // namespace

void AddReleaseCommand(CLI::App* fleet, FleetCommandArgs* fleet_args, ReleaseCommandArgs* args) {
  CLI::App* release = fleet->add_subcommand(
      "release-finalizers",
      "Uninstall: remove every nodehook.io/ finalizer from every object of the configured resources "
      "(runs no delete hooks; needs --yes)");
  release->fallthrough();
  release->add_option("--config,-c", args->config_path, "the agents' config file (JSON): which resources")
      ->required();
  release->add_option("--previous", args->previous_paths,
                      "a config the agents ran before (repeatable): release its resources too (e.g. ones removed "
                      "from the config since)");
  release->add_flag("--yes", args->yes, "really remove them (no delete hook runs for these objects)");
  release->add_option("--stop-agents", args->stop_agents,
                       "NAMESPACE/DAEMONSET: delete the agents' DaemonSet and wait until its pods are gone first "
                       "(running agents put finalizers back)")
      ->check([](const std::string& value) -> std::string {
        auto slash = value.find('/');
        if (slash == std::string::npos || slash == 0 || slash + 1 == value.size() ||
            value.find('/', slash + 1) != std::string::npos) {
          return "expected NAMESPACE/DAEMONSET (e.g. nodehook/nodehook), got '" + value + "'";
        }
        return "";
      });
  release->add_flag("--uncordon-failed", args->uncordon_failed,
                    "also uncordon the nodes kept cordoned because they failed an object state (on_failure "
                    "keep_cordoned); without it they stay cordoned for a person to look at");
  release->add_option("--stop-timeout-seconds", args->stop_timeout_seconds,
                      "how long to wait for the agent pods to be gone (default 300)")
      ->check(CLI::Range(1, 86400));
  release->callback([fleet_args] { fleet_args->action = "release-finalizers"; });
}

Result<std::unique_ptr<KubeClient>> DefaultReleaseClient(const FleetCommandArgs& args) {
  Result<TransportConfig> connection = LoadConnection(args.kubeconfig, WithoutKubeconfig::kUserElseInCluster);
  if (!connection.ok()) return connection.status();
  connection->connect_timeout_seconds = args.timeout_seconds;
  connection->idle_timeout_seconds = args.timeout_seconds;
  return std::unique_ptr<KubeClient>(std::make_unique<RestKubeClient>(NewCpprestTransport(*connection)));
}

int RunReleaseCommand(const FleetCommandArgs& fleet_args, const ReleaseCommandArgs& args,
                      const ReleaseClientFactory& make_client, std::ostream& out, std::ostream& err, Clock& clock) {
  // Off the node: neither hook programs nor NODE_NAME matter for which resources to release.
  UninstallScope scope;
  std::vector<std::string> paths{args.config_path};
  paths.insert(paths.end(), args.previous_paths.begin(), args.previous_paths.end());
  for (const std::string& path : paths) {
    ConfigResult loaded = LoadConfigFile(path, OfflineSources(EnvironmentSources()));
    if (!loaded.ok()) {
      for (const ConfigError& e : loaded.errors) err << e.ToString(path) << "\n";
      return 2;
    }
    AddToUninstall(loaded.config, &scope);
  }
  UninstallOptions options{args.stop_agents, std::chrono::seconds(args.stop_timeout_seconds), args.uncordon_failed};
  if (!args.yes) {
    DescribeUninstall(scope, options, err);
    return 2;
  }
  Result<std::unique_ptr<KubeClient>> client = make_client(fleet_args);
  if (!client.ok()) {
    err << kWhat << ": " << client.status().message() << "\n";
    return 2;
  }
  return Uninstall(**client, scope, options, clock, out, err);
}

}  // namespace nodehook
