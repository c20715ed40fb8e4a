// Builds a TransportConfig from kubeconfig files or from the in-cluster service account.
// Functions over files; thread-safe. The returned callbacks are thread-safe too.
#pragma once

#include <string>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"

namespace nodehook {

// Reads a kubeconfig, or a ':'-separated list of them merged as kubectl merges them
// (kubeconfig_files.h), in YAML or JSON, and takes the current context's cluster and user:
//  - cluster: server, certificate-authority[-data] (then the only trusted CA),
//    insecure-skip-tls-verify (warned about; refused beside a CA), tls-server-name, proxy-url
//    (http:// proxies only), extensions (the exec plugin's cluster config);
//  - user: token, tokenFile, client-certificate[-data], client-key[-data], or an exec credential
//    plugin (kubeconfig_exec.h; its tokens are cached against `clock`). auth-provider, basic
//    auth and impersonation are refused with a clear error rather than ignored.
// The rules of transport_security.h apply (no credentials over http://). Relative paths resolve
// against the directory of the file that names them. Errors name the file, line, column, entry
// and key; a missing single file is kNotFound.
Result<TransportConfig> LoadKubeconfig(const std::string& path_list, Clock& clock = SystemClock::Instance());

// In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, CA and token under
// `secrets_dir` (default /var/run/secrets/kubernetes.io/serviceaccount). The token callback
// re-reads the token file once a minute (projected tokens rotate) and at once after a 401;
// ca.crt is followed as it changes (TransportConfig::ca_pem_source). A kubeconfig tokenFile and
// certificate-authority file are followed the same way.
Result<TransportConfig> LoadInClusterConfig(
    const std::string& secrets_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace nodehook
