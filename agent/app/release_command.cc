#include "agent/app/release_command.h"

#include <algorithm>
#include <set>

#include "agent/config/config.h"
#include "agent/kubectl/agent_stand_down.h"
#include "agent/kubectl/cordon_release.h"
#include "agent/kubectl/finalizer_release.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook release-finalizers";

std::string Scope(const ResourceRef& r) {
  return r.Id() + (r.namespace_name.empty() ? " (all namespaces)" : " (namespace " + r.namespace_name + ")");
}

// Whether the release may go on: the agents were stopped (--stop-agents), or none runs. A
// running agent puts finalizers back as they are removed.
bool AgentsStopped(KubeClient& client, const ReleaseCommandArgs& args, Clock& clock, std::ostream& out,
                   std::ostream& err) {
  const char* nothing = "Nothing was released.\n";
  if (!args.stop_agents.empty()) {
    auto slash = args.stop_agents.find('/');
    StandDownOptions options{args.stop_agents.substr(0, slash), args.stop_agents.substr(slash + 1),
                             std::chrono::seconds(args.stop_timeout_seconds)};
    // Every answer's Date sets it (none with a test's fake client): a pod's grace ends by the server's clock.
    options.server_offset = [] { return Duration(ApiServerClock().offset_ms()); };
    Status stopped = StandDownAgents(client, options, clock, out);
    if (stopped.ok()) return true;
    err << kWhat << ": " << stopped.message() << "\n" << nothing;
    return false;
  }
  Result<std::vector<std::string>> running = RunningAgents(client, kAgentPodsSelector);
  if (!running.ok()) {
    // Someone allowed to patch the objects but not to list pods: say what was not checked.
    err << kWhat << ": warning: cannot tell whether agents still run (" << running.status().message()
        << "); stop them first, or their finalizers come back\n";
    return true;
  }
  if (running->empty()) return true;
  err << kWhat << ": agents still run, and would put finalizers back as they are removed:\n";
  for (const std::string& pod : *running) err << "  " << pod << "\n";
  err << "Stop them first: run this again with --stop-agents NAMESPACE/DAEMONSET (it deletes the DaemonSet and "
         "waits for its pods), or delete the DaemonSet yourself and wait for its pods to be gone.\n"
      << nothing;
  return false;
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
  ConfigResult loaded = LoadConfigFile(args.config_path, OfflineSources(EnvironmentSources()));
  if (!loaded.ok()) {
    for (const ConfigError& e : loaded.errors) err << e.ToString(args.config_path) << "\n";
    return 2;
  }
  std::vector<ResourceRef> resources;
  std::set<std::string> cordoning;  // the rollouts whose node steps cordon (RolloutIdOf)
  auto add = [&resources, &cordoning](const Config& config) {
    for (const WatchedResource& r : config.resources) {
      if (r.rollout && r.rollout->Cordons()) cordoning.insert(RolloutIdOf(r.ref));
      bool known = std::any_of(resources.begin(), resources.end(), [&](const ResourceRef& x) {
        return x.group == r.ref.group && x.plural == r.ref.plural && x.namespace_name == r.ref.namespace_name;
      });
      if (!known) resources.push_back(r.ref);
    }
  };
  add(loaded.config);
  for (const std::string& path : args.previous_paths) {
    ConfigResult previous = LoadConfigFile(path, OfflineSources(EnvironmentSources()));
    if (!previous.ok()) {
      for (const ConfigError& e : previous.errors) err << e.ToString(path) << "\n";
      return 2;
    }
    add(previous.config);
  }
  const char* warning = "No delete hook runs for the objects released: what the delete hooks would have done on "
                        "the nodes is not done.";
  if (!args.yes) {
    if (!args.stop_agents.empty()) {
      err << kWhat << " deletes DaemonSet " << args.stop_agents << " and waits for its pods to be gone, then\n";
    }
    err << kWhat << " removes every nodehook.io/ finalizer from every object of:\n";
    for (const ResourceRef& r : resources) err << "  " << Scope(r) << "\n";
    if (!cordoning.empty()) {
      err << "and uncordons the nodes its rollouts cordoned for work still going on"
          << (args.uncordon_failed ? " or kept cordoned after a failure.\n" : " (not those kept after a failure).\n");
    }
    err << warning << "\nRun it again with --yes to do it. Nothing was changed.\n";
    return 2;
  }
  Result<std::unique_ptr<KubeClient>> client = make_client(fleet_args);
  if (!client.ok()) {
    err << kWhat << ": " << client.status().message() << "\n";
    return 2;
  }
  out << warning << "\n";
  if (!AgentsStopped(**client, args, clock, out, err)) return args.stop_agents.empty() ? 2 : 1;
  ReleaseTotals totals = ReleaseFinalizers(**client, resources, out, err);
  out << "released " << totals.finalizers << " finalizer" << (totals.finalizers == 1 ? "" : "s") << " from "
      << totals.released_objects << " of " << totals.objects << " objects";
  if (totals.failures > 0) out << "; " << totals.failures << " failed (see above)";
  out << "\n";
  int failures = totals.failures;
  if (!cordoning.empty()) {
    CordonReleaseTotals cordons = ReleaseCordons(**client, cordoning, args.uncordon_failed, out, err);
    out << "gave back " << cordons.unmarked << " of " << cordons.marks << " node cordon"
        << (cordons.marks == 1 ? "" : "s") << " (" << cordons.uncordoned << " uncordoned)";
    if (cordons.kept_failed > 0) out << "; kept " << cordons.kept_failed << " of failed nodes";
    if (cordons.failures > 0) out << "; " << cordons.failures << " failed (see above)";
    out << "\n";
    failures += cordons.failures;
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace nodehook
