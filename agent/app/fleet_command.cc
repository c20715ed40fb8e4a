#include "agent/app/fleet_command.h"

#include "agent/kubectl/fleet_report.h"
#include "agent/kubectl/fleet_survey.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"

namespace nodehook {
namespace {

std::string ObjectsPath(const FleetCommandArgs& args) {
  return "/v1/objects?limit=" + std::to_string(args.limit) + (args.action == "failing" ? "&failing=true" : "");
}

}  // namespace

bool InvokedAsKubectlPlugin(const char* argv0) {
  std::string name = argv0 != nullptr ? argv0 : "";
  size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  return name == "kubectl-nodehook";
}

CLI::App* AddFleetCommand(CLI::App& app, FleetCommandArgs* args) {
  CLI::App* fleet = app.add_subcommand(
      "fleet", "Every node's progress, asked of each agent through the API server (also: kubectl nodehook)");
  fleet->add_option("--kubeconfig", args->kubeconfig, "kubeconfig (default: $KUBECONFIG, else ~/.kube/config)");
  fleet->add_option("--namespace,-n", args->target.namespace_name, "namespace of the agent pods")
      ->capture_default_str();
  fleet->add_option("--selector,-l", args->target.label_selector, "label selector of the agent pods")
      ->capture_default_str();
  fleet->add_option("--port", args->target.port, "the agents' health_address port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  fleet->add_option("--limit", args->limit, "objects asked of each node")->check(CLI::Range(1, 5000))->capture_default_str();
  fleet->add_option("--parallel", args->parallel, "agents asked at once")->check(CLI::Range(1, 256))->capture_default_str();
  fleet->add_option("--timeout", args->timeout_seconds, "seconds to wait for one agent's answer")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  auto action = [&](const char* name, const char* help) {
    CLI::App* sub = fleet->add_subcommand(name, help);
    sub->fallthrough();  // the options above may also come after the action
    sub->callback([args, name] { args->action = name; });
  };
  action("status", "One table of object x node -> state (the default)");
  action("failing", "Failing handlers across the fleet: node, object, handler, retries, last message");
  return fleet;
}

Result<std::unique_ptr<FleetSource>> KubeconfigFleetSource(const FleetCommandArgs& args) {
  Result<TransportConfig> connection = LoadConnection(args.kubeconfig, WithoutKubeconfig::kUserKubeconfig);
  if (!connection.ok()) return connection.status();
  connection->connect_timeout_seconds = args.timeout_seconds;
  connection->idle_timeout_seconds = args.timeout_seconds;
  auto client = std::make_unique<RestKubeClient>(NewCpprestTransport(*connection));
  return NewKubeFleetSource(std::move(client), NewCpprestTransport(*connection), args.target);
}

int RunFleetCommand(const FleetCommandArgs& args, const FleetSourceFactory& make_source, std::ostream& out,
                    std::ostream& err, const Clock& clock) {
  Result<std::unique_ptr<FleetSource>> source = make_source(args);
  if (!source.ok()) {
    err << "kubectl nodehook: " << source.status().message() << "\n";
    return 2;
  }
  Result<std::vector<NodeAnswer>> answers = Survey(**source, ObjectsPath(args), args.parallel);
  if (!answers.ok()) {
    err << "kubectl nodehook: " << answers.status().message() << "\n";
    return 1;
  }
  if (answers->empty()) {
    err << "kubectl nodehook: no agent pods in namespace " << args.target.namespace_name << " with labels "
        << args.target.label_selector << " (see --namespace and --selector)\n";
    return 1;
  }
  out << (args.action == "failing" ? FormatFailingTable(*answers, ToMillis(clock.Now())) : FormatFleetTable(*answers));
  for (const NodeAnswer& a : *answers) {
    if (!a.error.ok()) return 3;
  }
  return 0;
}

}  // namespace nodehook
