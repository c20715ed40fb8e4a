#include "agent/app/rbac_command.h"

#include "agent/admission/agent_permissions.h"
#include "agent/admission/node_bound_policy.h"
#include "agent/admission/rbac_yaml.h"

namespace nodehook {

CLI::App* AddRbacCommand(CLI::App& app, RbacCommandArgs* args) {
  CLI::App* rbac = app.add_subcommand("rbac", "Print the least-privilege ClusterRole for a config (YAML)");
  rbac->add_option("--config,-c", args->config_path, "Config file (JSON)")->required();
  rbac->add_option("--previous", args->previous_path,
                   "the config the agents ran before this one: keep the rights to release the finalizers it leaves "
                   "behind (resources that left finalizer or singleton mode, or the config)");
  rbac->add_option("--name", args->name, "metadata.name of the ClusterRole")->capture_default_str();
  rbac->add_option("--namespace", args->namespace_name,
                   "the agents' namespace: the admission rules confine the writes of their ServiceAccount there")
      ->capture_default_str();
  rbac->add_option("--service-account", args->service_account, "the agents' ServiceAccount")->capture_default_str();
  rbac->add_option("--part", args->part, "what to print: rbac (the agents' roles), admission (the node-bound rules), steward (its roles) or all")
      ->check(CLI::IsMember({"all", "rbac", "admission", "steward"}))
      ->capture_default_str();
  return rbac;
}

int RunRbacCommand(const RbacCommandArgs& args, std::ostream& out, std::ostream& err) {
  ConfigSources sources = EnvironmentSources();
  // The role is the same for every node; a shipped config takes its node name from the pod.
  if (sources.env.count("NODE_NAME") == 0) sources.env["NODE_NAME"] = "any-node";
  // The role does not depend on where the hooks are: it is often rendered off the node.
  sources.check_program = nullptr;
  ConfigResult loaded = LoadConfigFile(args.config_path, sources);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) err << e.ToString(args.config_path) << "\n";
    return 2;
  }
  ConfigResult previous;
  if (!args.previous_path.empty()) {
    previous = LoadConfigFile(args.previous_path, sources);
    if (!previous.ok()) {
      for (const auto& e : previous.errors) err << e.ToString(args.previous_path) << "\n";
      return 2;
    }
  }
  const Config& config = loaded.config;
  AgentPermissions needed = DeriveAgentPermissions(config, args.previous_path.empty() ? nullptr : &previous.config);
  if (args.part == "admission") {
    PrintAdmission(needed.guarded, args, out);
    return 0;
  }
  if (args.part == "steward") {
    out << StewardRbacYaml(config, args.name, args.namespace_name);
    return 0;
  }
  out << ClusterRoleYaml(args.name, needed.rules);
  if (needed.lease_role) out << "---\n" << LeaseRoleYaml(args.name, config.tuning.lease_name);
  if (needed.rollout_role) out << "---\n" << RolloutRoleYaml(args.name);
  if (needed.agent_pods_role) out << "---\n" << AgentPodsRoleYaml(args.name);
  if (needed.own_pod_role) out << "---\n" << OwnPodRoleYaml(args.name);
  if (args.part == "all") {
    out << "---\n";
    PrintAdmission(needed.guarded, args, out);
    if (config.tuning.cross_node_writes == "steward") out << "---\n" << StewardRbacYaml(config, args.name, args.namespace_name);
  }
  return 0;
}

void PrintAdmission(const Config& config, const RbacCommandArgs& args, std::ostream& out) {
  if (AgentsWriteAcrossNodes(config)) {
    // The rules would refuse the agents' cross-node writes: print none rather than break them.
    out << "# No node-bound admission rules: with tuning.cross_node_writes \"agents\" the agents remove departed\n"
        << "# nodes' finalizers, grant rollout slots or take over the singleton Lease themselves, which the rules\n"
        << "# refuse. Set it to \"steward\" and run the steward to confine each agent to its node (docs/security.md).\n";
  } else {
    PolicySubject subject{args.name, args.namespace_name, args.service_account};
    out << NodeBoundPolicyYaml(config, subject);
  }
}

}  // namespace nodehook
