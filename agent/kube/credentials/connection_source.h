// Which API connection a command uses: the one kubeconfig loading rule of every command.
//  1. A kubeconfig named explicitly is used: `--kubeconfig`, or the agent's and the steward's
//     api.kubeconfig (its knob is filled from $KUBECONFIG or --kubeconfig by agent/config).
//  2. Without one, the fallback the command runs with decides:
//     kInCluster          the agent and the steward: the pod's service account;
//     kUserKubeconfig     kubectl nodehook, run by people: $KUBECONFIG, else ~/.kube/config;
//     kUserElseInCluster  release-finalizers, also run in a pod (the Helm chart's pre-delete Job):
//                         as kUserKubeconfig, but in cluster when that file does not exist and
//                         KUBERNETES_SERVICE_HOST is set.
// ChooseConnection takes the environment and the file test as arguments, so the precedence is
// tested without touching either. Functions; thread-safe.
#pragma once

#include <functional>
#include <string>

#include "agent/base/environment.h"
#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"

namespace nodehook {

enum class WithoutKubeconfig { kInCluster, kUserKubeconfig, kUserElseInCluster };

struct ConnectionSource {
  bool in_cluster = false;
  std::string kubeconfig;  // a ':'-separated path list (connection_config.h), when !in_cluster
};

using FileExists = std::function<bool(const std::string& path)>;

// `named`: the kubeconfig given explicitly ("" = none).
ConnectionSource ChooseConnection(const std::string& named, WithoutKubeconfig fallback, const EnvLookup& env,
                                  const FileExists& exists);

// LoadInClusterConfig or LoadKubeconfig, as `source` says.
Result<TransportConfig> LoadConnection(const ConnectionSource& source);
// Both, with this process's environment and files.
Result<TransportConfig> LoadConnection(const std::string& named, WithoutKubeconfig fallback);

}  // namespace nodehook
