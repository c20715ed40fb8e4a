// nodehook: runs node-local hooks for Kubernetes custom resources, on every node.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <vector>

#include "agent/app/fence_command.h"
#include "agent/app/fleet_command.h"
#include "agent/app/rbac_command.h"
#include "agent/app/release_command.h"
#include "agent/app/rollout_command.h"
#include "agent/app/run_command.h"
#include "agent/app/state_command.h"
#include "agent/app/steward_command.h"
#include "agent/config/config.h"
#include "agent/config/config_schema.h"

namespace {

// Every tuning knob gets a flag on the commands that read the config. A true-or-false knob is a
// switch: "--allow-volatile-state" means true, "--allow-volatile-state=false" false.
void AddKnobFlags(CLI::App* command, std::map<std::string, std::string>* values) {
  for (const auto& knob : nodehook::Knobs()) {
    std::string help = knob.help + " (env " + knob.env + (knob.range.empty() ? "" : "; " + knob.range) + ")";
    if (knob.is_switch) {
      command->add_flag(knob.flag + "{true}", (*values)[knob.name], help);
    } else {
      command->add_option(knob.flag, (*values)[knob.name], help);
    }
  }
}

nodehook::ConfigSources SourcesFrom(const CLI::App* command, const std::map<std::string, std::string>& values) {
  nodehook::ConfigSources sources = nodehook::EnvironmentSources();
  for (const auto& knob : nodehook::Knobs()) {
    if (command->count(knob.flag) > 0) sources.flags[knob.name] = values.at(knob.name);
  }
  return sources;
}

// Every command and its arguments, which CLI11 fills in while parsing (so this must not move).
struct Commands {
  CLI::App* run = nullptr;
  std::string config_path;
  std::map<std::string, std::string> run_knobs;
  CLI::App* check = nullptr;
  std::string check_path;
  std::map<std::string, std::string> check_knobs;
  bool check_offline = false;
  CLI::App* state = nullptr;
  nodehook::StateCommandArgs state_args;
  CLI::App* rbac = nullptr;
  nodehook::RbacCommandArgs rbac_args;
  CLI::App* fleet = nullptr;
  nodehook::FleetCommandArgs fleet_args;
  nodehook::ReleaseCommandArgs release_args;
  nodehook::RolloutCommandArgs rollout_args;
  CLI::App* steward = nullptr;
  std::string steward_config;
  std::string steward_identity;
  std::string steward_agents_namespace;
  std::map<std::string, std::string> steward_knobs;
  CLI::App* schema = nullptr;
  CLI::App* version = nullptr;
  // The downward API, read once here and passed to `run` and `steward`.
  nodehook::PodEnvironment pod = nodehook::ReadPodEnvironment();

  // Adds the commands to `app`, in the order --help lists them.
  void Declare(CLI::App& app);
  // Runs the one command given; returns the exit code.
  int RunChosen();
  int RunFleet();
  int RunCheck();
  int StartAgent();
  int StartSteward();
};

void Commands::Declare(CLI::App& app) {
  run = app.add_subcommand("run", "Watch the configured resources and run this node's hooks");
  run->add_option("--config,-c", config_path, "Config file (JSON)")->required();
  AddKnobFlags(run, &run_knobs);

  check = app.add_subcommand("check-config", "Validate a config file; exit 2 when it is invalid");
  check->add_option("file", check_path, "Config file (JSON)")->required();
  check->add_flag("--offline", check_offline,
                  "Check the file alone, e.g. in CI: schema, ranges, selectors and templates, but no hook programs "
                  "and no credentials");
  AddKnobFlags(check, &check_knobs);

  steward = app.add_subcommand("steward",
                               "Do the agents' cross-node work under another account: departed nodes' finalizers, "
                               "rollout grants, expired singleton Leases (docs/security.md)");
  steward->add_option("--config,-c", steward_config, "The agents' config file (JSON)")->required();
  steward->add_option("--identity", steward_identity, "Its name in Leases and Events (default: $POD_NAME)");
  steward->add_option("--agents-namespace", steward_agents_namespace,
                      "Where the agent pods (labelled nodehook.io/agent) run (default: $POD_NAMESPACE)");
  AddKnobFlags(steward, &steward_knobs);

  state = nodehook::AddStateCommand(app, &state_args);
  rbac = nodehook::AddRbacCommand(app, &rbac_args);
  fleet = nodehook::AddFleetCommand(app, &fleet_args);
  nodehook::AddReleaseCommand(fleet, &fleet_args, &release_args);
  nodehook::AddRolloutCommands(fleet, &fleet_args, &rollout_args);

  schema = app.add_subcommand("config-schema", "Print a JSON Schema of the config file (for editors and linters)");
  version = app.add_subcommand("version", "Print the version");
}

int Commands::RunChosen() {
  if (*version) {
    std::cout << "nodehook " << NODEHOOK_VERSION << "\n";
    return 0;
  }
  if (*state) return nodehook::RunStateCommand(state_args, std::cout, std::cerr, nodehook::SystemClock::Instance());
  if (*fleet) return RunFleet();
  if (*rbac) return nodehook::RunRbacCommand(rbac_args, std::cout, std::cerr);
  if (*schema) {
    std::cout << nodehook::ConfigSchemaJson();
    return 0;
  }
  if (*check) return RunCheck();
  if (*steward) return StartSteward();
  return StartAgent();
}

int Commands::RunFleet() {
  if (fleet_args.action == "release-finalizers") {
    return nodehook::RunReleaseCommand(fleet_args, release_args, nodehook::DefaultReleaseClient, std::cout, std::cerr);
  }
  if (nodehook::IsRolloutAction(fleet_args.action)) {
    return nodehook::RunRolloutCommand(fleet_args, rollout_args, nodehook::KubeconfigRolloutDeps(), std::cout, std::cerr);
  }
  return nodehook::RunFleetCommand(fleet_args, nodehook::KubeconfigFleetSource, std::cout, std::cerr,
                                   nodehook::SystemClock::Instance());
}

int Commands::RunCheck() {
  nodehook::ConfigSources sources = SourcesFrom(check, check_knobs);
  if (check_offline) {
    int code = nodehook::RunCheckConfig(check_path, nodehook::OfflineSources(sources), std::cout, std::cerr);
    if (code == 0) std::cout << "not checked (--offline): the hook programs and the API credentials\n";
    return code;
  }
  return nodehook::RunCheckConfig(check_path, sources, std::cout, std::cerr, nodehook::CheckConnection);
}

int Commands::StartAgent() {
  nodehook::ConfigResult loaded = nodehook::LoadConfigFile(config_path, SourcesFrom(run, run_knobs));
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) std::cerr << e.ToString(config_path) << "\n";
    return 2;
  }
  return nodehook::RunAgent(loaded.config, pod);
}

int Commands::StartSteward() {
  std::string identity = !steward_identity.empty() ? steward_identity : pod.pod_name;
  if (identity.empty()) identity = "nodehook-steward";
  nodehook::ConfigSources sources = SourcesFrom(steward, steward_knobs);
  // The agents' config names no node for the steward: it acts for none.
  if (sources.env.count("NODE_NAME") == 0) sources.env["NODE_NAME"] = identity;
  // It runs no hook: the programs are on the nodes, not in its pod.
  sources.check_program = nullptr;
  nodehook::ConfigResult loaded = nodehook::LoadConfigFile(steward_config, sources);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) std::cerr << e.ToString(steward_config) << "\n";
    return 2;
  }
  std::string agents = !steward_agents_namespace.empty() ? steward_agents_namespace : pod.pod_namespace;
  return nodehook::RunSteward(loaded.config, pod, identity, agents);
}

}  // namespace

int main(int argc, char** argv) {
  // Installed as kubectl-nodehook, `kubectl nodehook ARGS` runs `nodehook fleet ARGS`.
  // Internal: wraps cluster-singleton hooks (fence_command.h); kept out of CLI11 and --help.
  if (argc > 1 && std::string(argv[1]) == "fence") return nodehook::RunFence(argc - 2, argv + 2);
  std::vector<char*> args(argv, argv + argc);
  if (nodehook::InvokedAsKubectlPlugin(argv[0])) args.insert(args.begin() + 1, const_cast<char*>("fleet"));
  argc = static_cast<int>(args.size());
  argv = args.data();

  CLI::App app{"nodehook: run node-local hooks for Kubernetes custom resources, on every node"};
  app.require_subcommand(1);
  Commands commands;
  commands.Declare(app);
  CLI11_PARSE(app, argc, argv);
  return commands.RunChosen();
}
