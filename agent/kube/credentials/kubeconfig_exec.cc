#include "agent/kube/credentials/kubeconfig_exec.h"

namespace nodehook {

Result<ExecPluginConfig> ReadExecPlugin(const FieldReader& exec, const std::string& user_name,
                                        const ExecClusterInfo& cluster) {
  ExecPluginConfig config;
  config.user = user_name;
  std::string command, interactive_mode;
  bool provide_cluster_info = false;
  std::vector<std::string> args;
  NODEHOOK_RETURN_IF_ERROR(exec.String("command", &command));
  NODEHOOK_RETURN_IF_ERROR(exec.String("apiVersion", &config.api_version));
  NODEHOOK_RETURN_IF_ERROR(exec.StringList("args", &args));
  NODEHOOK_RETURN_IF_ERROR(exec.NameValueList("env", &config.env));
  NODEHOOK_RETURN_IF_ERROR(exec.String("installHint", &config.install_hint));
  NODEHOOK_RETURN_IF_ERROR(exec.String("interactiveMode", &interactive_mode));
  NODEHOOK_RETURN_IF_ERROR(exec.Bool("provideClusterInfo", &provide_cluster_info));

  if (command.empty()) return exec.Error("command", "must be set to use an exec credential plugin");
  if (config.api_version != kExecApiV1 && config.api_version != kExecApiV1Beta1) {
    return exec.Error("apiVersion", "expected " + std::string(kExecApiV1) + " or " + kExecApiV1Beta1 + ", got '" +
                                        config.api_version + "'");
  }
  if (interactive_mode.empty() && config.api_version == kExecApiV1) {
    return exec.Error("interactiveMode", "must be set for " + std::string(kExecApiV1) + " (Never or IfAvailable)");
  }
  if (interactive_mode == "Always") {
    return exec.Error("interactiveMode", "is Always, but the agent never has a terminal: use Never or IfAvailable");
  }
  if (!interactive_mode.empty() && interactive_mode != "Never" && interactive_mode != "IfAvailable") {
    return exec.Error("interactiveMode", "expected Never, IfAvailable or Always, got '" + interactive_mode + "'");
  }
  // Like kubectl: only a command with a directory part is relative to the kubeconfig.
  config.argv.push_back(command.find('/') == std::string::npos ? command : exec.Resolve(command));
  config.argv.insert(config.argv.end(), args.begin(), args.end());
  if (provide_cluster_info) config.cluster = cluster;
  return config;
}

}  // namespace nodehook
