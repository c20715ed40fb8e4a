// Bearer tokens from a kubeconfig `exec` credential plugin (client.authentication.k8s.io
// ExecCredential v1 and v1beta1), as kubectl runs them: the plugin is run without a shell with
// KUBERNETES_EXEC_INFO in its environment, its ExecCredential is checked, and the token is
// cached until status.expirationTimestamp (for ever when it has none) or until the API server
// rejects it. Thread-safe: one plugin run at a time; concurrent callers wait for its result.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"

namespace nodehook {

constexpr const char* kExecApiV1 = "client.authentication.k8s.io/v1";
constexpr const char* kExecApiV1Beta1 = "client.authentication.k8s.io/v1beta1";

// The cluster as an exec plugin sees it when the kubeconfig sets provideClusterInfo.
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string ca_pem;       // sent base64-encoded as certificate-authority-data
  std::string proxy_url;
  std::string config_json;  // the cluster's "client.authentication.k8s.io/exec" extension, or ""
};

struct ExecPluginConfig {
  std::string user;         // kubeconfig user name, for messages
  std::string api_version;  // kExecApiV1 or kExecApiV1Beta1
  std::vector<std::string> argv;                         // command (resolved) and args
  std::vector<std::pair<std::string, std::string>> env;  // from the kubeconfig
  std::optional<ExecClusterInfo> cluster;                // set when provideClusterInfo is true
  std::string install_hint;                              // appended to "cannot run" errors
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// The KUBERNETES_EXEC_INFO value: an ExecCredential with spec.interactive false (the agent has
// no terminal) and spec.cluster when `config.cluster` is set.
std::string ExecInfoJson(const ExecPluginConfig& config);

struct ExecCredential {
  std::string token;
  std::optional<TimePoint> expires;  // none: valid until rejected
};

// Checks a plugin's stdout as kubectl does: kind ExecCredential, the configured apiVersion, a
// status with a token. A client certificate in the status is refused (not supported here).
Result<ExecCredential> ParseExecCredential(const std::string& stdout_text, const std::string& api_version);

class ExecCredentialSource {
 public:
  // `clock` must outlive this object.
  ExecCredentialSource(ExecPluginConfig config, Clock& clock) : config_(std::move(config)), clock_(clock) {}

  // The cached token, or a fresh one when there is none or it has expired. A failed run is
  // kUnavailable (kTimeout when it hung) naming the plugin, its exit code and its stderr.
  Result<std::string> Token();
  // After a 401 for `rejected`: runs the plugin again, unless another caller already replaced
  // that token, in which case the newer one is returned.
  Result<std::string> Refresh(const std::string& rejected);

 private:
  Result<std::string> RunLocked() REQUIRES(mu_);

  const ExecPluginConfig config_;
  Clock& clock_;
  Mutex mu_;                              // held while the plugin runs
  std::optional<ExecCredential> cached_ GUARDED_BY(mu_);
};

}  // namespace nodehook
