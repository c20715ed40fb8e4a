#include "agent/kube/credentials/connection_source.h"

#include <sys/stat.h>

#include "agent/kube/credentials/connection_config.h"

namespace nodehook {
namespace {

bool PathExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// $KUBECONFIG when set and not empty, else ~/.kube/config, as kubectl looks.
std::string UserKubeconfig(const EnvLookup& env) {
  std::optional<std::string> listed = env("KUBECONFIG");
  if (listed && !listed->empty()) return *listed;
  return env("HOME").value_or("") + "/.kube/config";
}

}  // namespace

ConnectionSource ChooseConnection(const std::string& named, WithoutKubeconfig fallback, const EnvLookup& env,
                                  const FileExists& exists) {
  if (!named.empty()) return ConnectionSource{false, named};
  if (fallback == WithoutKubeconfig::kInCluster) return ConnectionSource{true, ""};
  std::string user = UserKubeconfig(env);
  // A pod (the chart's Job) has no kubeconfig but its service account. The test is of the whole
  // value: a path list is never one existing file, so a listed $KUBECONFIG falls back too.
  if (fallback == WithoutKubeconfig::kUserElseInCluster && !exists(user) && env("KUBERNETES_SERVICE_HOST")) {
    return ConnectionSource{true, ""};
  }
  return ConnectionSource{false, user};
}

Result<TransportConfig> LoadConnection(const ConnectionSource& source) {
  return source.in_cluster ? LoadInClusterConfig() : LoadKubeconfig(source.kubeconfig);
}

Result<TransportConfig> LoadConnection(const std::string& named, WithoutKubeconfig fallback) {
  return LoadConnection(ChooseConnection(named, fallback, ProcessEnvironment(), PathExists));
}

}  // namespace nodehook
