#include "agent/kube/transport/transport_security.h"

#include "agent/base/log.h"

namespace nodehook {
namespace {

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

Result<std::vector<std::string>> CheckTransportSecurity(const TransportConfig& config) {
  std::vector<std::string> warnings;
  bool has_credential = config.bearer_token || !config.client_cert_pem.empty() || !config.client_key_pem.empty();
  if (StartsWith(config.server, "http://")) {
    if (has_credential) {
      return InvalidError("server " + config.server +
                          " is plain http:// but credentials are configured (token, exec plugin or client "
                          "certificate); they would be sent in clear: use https://");
    }
    warnings.emplace_back("plain http:// server: traffic is neither encrypted nor authenticated");
  } else if (!StartsWith(config.server, "https://")) {
    return InvalidError("server '" + config.server + "' must start with https:// (or http://)");
  }
  if (config.insecure_skip_tls_verify) {
    if (!config.ca_pem.empty()) {
      return InvalidError(
          "insecure-skip-tls-verify is set together with a certificate authority; specifying a root "
          "certificates file with the insecure flag is not allowed (kubectl refuses it too): remove one");
    }
    if (StartsWith(config.server, "https://")) {
      warnings.emplace_back("insecure-skip-tls-verify: the server's certificate is not verified, so anyone on the "
                         "path can impersonate the API server");
    }
  }
  return warnings;
}

void LogTransportWarnings(const TransportConfig& config, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    Log(LogLevel::kWarn, "insecure API connection",
        {{"server", config.server}, {"detail", warning}, {"next", "connect anyway, as configured"}});
  }
}

}  // namespace nodehook
