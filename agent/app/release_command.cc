#include "agent/app/release_command.h"

#include <sys/stat.h>

#include <cstdlib>

#include "agent/config/config.h"
#include "agent/kubectl/finalizer_release.h"
#include "agent/kube/credentials/connection_config.h"
#include "agent/kube/client/rest_kube_client.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook release-finalizers";

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string Scope(const ResourceRef& r) {
  return r.Id() + (r.namespace_name.empty() ? " (all namespaces)" : " (namespace " + r.namespace_name + ")");
}

}  // namespace

void AddReleaseCommand(CLI::App* fleet, FleetCommandArgs* fleet_args, ReleaseCommandArgs* args) {
  CLI::App* release = fleet->add_subcommand(
      "release-finalizers",
      "Uninstall: remove every nodehook.io/ finalizer from every object of the configured resources "
      "(runs no delete hooks; needs --yes)");
  release->fallthrough();
  release->add_option("--config,-c", args->config_path, "the agents' config file (JSON): which resources")
      ->required();
  release->add_flag("--yes", args->yes, "really remove them (no delete hook runs for these objects)");
  release->callback([fleet_args] { fleet_args->action = "release-finalizers"; });
}

Result<std::unique_ptr<KubeClient>> DefaultReleaseClient(const FleetCommandArgs& args) {
  std::string kubeconfig = KubeconfigPath(args.kubeconfig);
  bool in_cluster = args.kubeconfig.empty() && !FileExists(kubeconfig) && std::getenv("KUBERNETES_SERVICE_HOST");
  Result<TransportConfig> connection = in_cluster ? LoadInClusterConfig() : LoadKubeconfig(kubeconfig);
  if (!connection.ok()) return connection.status();
  connection->connect_timeout_seconds = args.timeout_seconds;
  connection->idle_timeout_seconds = args.timeout_seconds;
  return std::unique_ptr<KubeClient>(std::make_unique<RestKubeClient>(NewCpprestTransport(*connection)));
}

int RunReleaseCommand(const FleetCommandArgs& fleet_args, const ReleaseCommandArgs& args,
                      const ReleaseClientFactory& make_client, std::ostream& out, std::ostream& err) {
  // Off the node: neither hook programs nor NODE_NAME matter for which resources to release.
  ConfigResult loaded = LoadConfigFile(args.config_path, OfflineSources(EnvironmentSources()));
  if (!loaded.ok()) {
    for (const ConfigError& e : loaded.errors) err << e.ToString(args.config_path) << "\n";
    return 2;
  }
  std::vector<ResourceRef> resources;
  for (const WatchedResource& r : loaded.config.resources) resources.push_back(r.ref);
  const char* warning = "No delete hook runs for the objects released: what the delete hooks would have done on "
                        "the nodes is not done.";
  if (!args.yes) {
    err << kWhat << " removes every nodehook.io/ finalizer from every object of:\n";
    for (const ResourceRef& r : resources) err << "  " << Scope(r) << "\n";
    err << warning << "\nRun it again with --yes to do it. Nothing was changed.\n";
    return 2;
  }
  Result<std::unique_ptr<KubeClient>> client = make_client(fleet_args);
  if (!client.ok()) {
    err << kWhat << ": " << client.status().message() << "\n";
    return 2;
  }
  out << warning << "\n";
  ReleaseTotals totals = ReleaseFinalizers(**client, resources, out, err);
  out << "released " << totals.finalizers << " finalizer" << (totals.finalizers == 1 ? "" : "s") << " from "
      << totals.released_objects << " of " << totals.objects << " objects";
  if (totals.failures > 0) out << "; " << totals.failures << " failed (see above)";
  out << "\n";
  return totals.failures > 0 ? 1 : 0;
}

}  // namespace nodehook
