#include "agent/app/rollout_command.h"

#include <thread>

#include "agent/kubectl/rollout_report.h"
#include "agent/kubectl/rollout_steer.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/transport/server_clock.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook";

std::string AgentsNamespace(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args) {
  return args.agents_namespace.empty() ? fleet_args.target.namespace_name : args.agents_namespace;
}

std::function<int64_t()> ServerNow(const RolloutDeps& deps) {
  if (deps.server_now_ms) return deps.server_now_ms;
  const Clock* clock = deps.clock;
  return [clock] { return ToMillis(clock->Now()); };
}

int Fail(std::ostream& err, const Status& status) {
  err << kWhat << ": " << status.message() << "\n";
  return 1;
}

// `wait`: its flags as options, and the agents to ask, found in the agents' namespace.
int Wait(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args, const RolloutDeps& deps,
         RolloutCluster& cluster, const ObjectSpec& spec, std::ostream& out, std::ostream& err) {
  Result<Duration> timeout = ParseWaitDuration(args.timeout);
  if (!timeout.ok()) {
    err << kWhat << ": --timeout: " << timeout.status().message() << "\n";
    return 2;
  }
  WaitOptions options{*timeout, args.timeout, Duration(args.poll_ms), fleet_args.parallel,
                      AgentsNamespace(fleet_args, args)};
  AgentsFleet agents;
  if (deps.fleet) {
    agents = [&]() {
      FleetCommandArgs in_namespace = fleet_args;
      in_namespace.target.namespace_name = options.agents_namespace;
      return deps.fleet(in_namespace);
    };
  }
  WaitTime time{deps.clock, ServerNow(deps), deps.sleep, deps.windows};
  return WaitForObject(cluster, agents, spec, options, time, out, err);
}

}  // namespace

bool IsRolloutAction(const std::string& action) {
  return action == "rollout-status" || action == "rollout-plan" || action == "rollout-pause" ||
         action == "rollout-resume" || action == "wait";
}

void AddRolloutCommands(CLI::App* fleet, FleetCommandArgs* fleet_args, RolloutCommandArgs* args) {
  auto object_options = [args](CLI::App* sub) {
    sub->fallthrough();
    sub->add_option("object", args->object, "RESOURCE[.GROUP]/NAME, e.g. widgets.example.com/w1")->required();
    sub->add_option("--namespace,-n", args->object_namespace, "the object's namespace (namespaced resources)");
    sub->add_option("--agents-namespace", args->agents_namespace,
                    "the agents' namespace, where the rollout Leases are (default: the fleet's, nodehook)");
  };
  CLI::App* rollout = fleet->add_subcommand("rollout", "A resource's rollout across the fleet, from its Leases");
  rollout->fallthrough();
  rollout->require_subcommand(1);
  auto action = [&](const char* name, const char* help) {
    CLI::App* sub = rollout->add_subcommand(name, help);
    object_options(sub);
    std::string chosen = std::string("rollout-") + name;
    sub->callback([fleet_args, chosen] { fleet_args->action = chosen; });
  };
  action("status", "Per node: done, running, verifying, soaking, failed, or waiting and why (read-only)");
  action("plan", "Dry run: the order nodes would go in (canaries first), in batches, and what blocks each now");
  action("pause", "Pause the object's rollout (annotation nodehook.io/rollout-paused); nodes inside finish");
  rollout->get_subcommand("pause")->add_flag(
      "--stop-nodes", args->stop_nodes,
      "stop the nodes inside too: those before their hook's success give their cordon back (value stop-nodes)");
  action("resume", "Resume it, and let a halted state continue (annotation nodehook.io/rollout-resume)");
  CLI::App* wait = fleet->add_subcommand(
      "wait", "Exit 0 once every node that handles OBJECT has handled its current state (4: timeout, 5: halted)");
  object_options(wait);
  wait->add_option("--timeout", args->timeout, "how long to wait, e.g. 90s, 5m")->capture_default_str();
  wait->add_option("--poll-ms", args->poll_ms, "milliseconds between looks")->check(CLI::Range(100, 60000))->capture_default_str();
  wait->callback([fleet_args] { fleet_args->action = "wait"; });
}

RolloutDeps KubeconfigRolloutDeps() {
  RolloutDeps deps;
  deps.cluster = [](const FleetCommandArgs& args,
                    const std::string& agents_namespace) -> Result<std::unique_ptr<RolloutCluster>> {
    Result<TransportConfig> connection = LoadConnection(args.kubeconfig, WithoutKubeconfig::kUserKubeconfig);
    if (!connection.ok()) return connection.status();
    connection->connect_timeout_seconds = args.timeout_seconds;
    connection->idle_timeout_seconds = args.timeout_seconds;
    return NewKubeRolloutCluster(std::make_unique<RestKubeClient>(NewCpprestTransport(*connection)),
                                 NewCpprestTransport(*connection), agents_namespace);
  };
  deps.fleet = KubeconfigFleetSource;
  deps.clock = &SystemClock::Instance();
  deps.server_now_ms = [] { return ApiServerClock().NowMs(); };  // every answer's Date sets it
  deps.sleep = [](Duration d) { std::this_thread::sleep_for(d); };
  return deps;
}

int RunRolloutCommand(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args, const RolloutDeps& deps,
                      std::ostream& out, std::ostream& err) {
  Result<ObjectSpec> spec = ParseObjectSpec(args.object, args.object_namespace);
  if (!spec.ok()) {
    err << kWhat << ": " << spec.status().message() << "\n";
    return 2;
  }
  Result<std::unique_ptr<RolloutCluster>> cluster = deps.cluster(fleet_args, AgentsNamespace(fleet_args, args));
  if (!cluster.ok()) {
    err << kWhat << ": " << cluster.status().message() << "\n";
    return 2;
  }
  const std::string& action = fleet_args.action;
  if (action == "wait") return Wait(fleet_args, args, deps, **cluster, *spec, out, err);
  Result<RolloutView> view = ReadRollout(**cluster, *spec, ServerNow(deps), deps.windows);
  if (!view.ok()) return Fail(err, view.status());
  if (action == "rollout-status") {
    out << FormatRolloutStatus(*view);
  } else if (action == "rollout-plan") {
    out << FormatRolloutPlan(*view);
  } else {
    return SteerRollout(**cluster, *view, action == "rollout-pause", args.stop_nodes, out, err);
  }
  return 0;
}

}  // namespace nodehook
