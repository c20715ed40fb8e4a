// Builds a TransportConfig from a kubeconfig file or from the in-cluster service account.
// Pure functions over files; thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"
#include "agent/kube/http_transport.h"

namespace nodehook {

// Reads a kubeconfig (YAML or JSON): the current context's cluster (server, certificate-authority
// or certificate-authority-data, insecure-skip-tls-verify) and user (token, tokenFile,
// client-certificate[-data], client-key[-data]). Relative file paths are resolved against the
// kubeconfig's directory. Errors name the key and line.
Result<TransportConfig> LoadKubeconfig(const std::string& path);

// In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, CA and token under
// `secrets_dir` (default /var/run/secrets/kubernetes.io/serviceaccount). The token callback
// re-reads the token file once a minute (projected tokens rotate) and at once after a 401;
// ca.crt is followed as it changes (TransportConfig::ca_pem_source). A kubeconfig tokenFile and
// certificate-authority file are followed the same way.
Result<TransportConfig> LoadInClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace nodehook
