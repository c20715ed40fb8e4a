// `nodehook rbac --config FILE`: prints the least-privilege ClusterRole for a config, derived
// from what the agent actually calls for it (admission/agent_permissions.h, as YAML by
// admission/rbac_yaml.h), and the node-bound admission rules. deploy/base/clusterrole.yaml is
// this command's output for the shipped config, and a test keeps the two equal.
// Parses, loads the configs and prints; not thread-safe (one call).
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>
#include <string>

#include "agent/config/config.h"

namespace nodehook {

struct RbacCommandArgs {
  std::string config_path;
  std::string previous_path;  // the config the agents ran before: keep what its release needs
  std::string name = "nodehook";
  std::string namespace_name = "nodehook";   // the agents' namespace: the admission rules match their account
  std::string service_account = "nodehook";
  std::string part = "all";  // "rbac" (the agents' roles), "admission", "steward" (its roles) or "all"
};

// The node-bound admission rules for `config` (admission/node_bound_policy.h), or a comment saying
// why there are none (the agents write across nodes themselves).
void PrintAdmission(const Config& config, const RbacCommandArgs& args, std::ostream& out);

CLI::App* AddRbacCommand(CLI::App& app, RbacCommandArgs* args);

// Loads the config (node_name may be missing: it does not change the role) and prints the
// ClusterRole to `out`, followed by "---" and LeaseRoleYaml when a resource is a singleton. Returns 0, or 2 with every config problem on `err`.
int RunRbacCommand(const RbacCommandArgs& args, std::ostream& out, std::ostream& err);

}  // namespace nodehook
