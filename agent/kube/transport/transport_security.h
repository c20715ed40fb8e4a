// The TLS and credential rules every TransportConfig must meet, the same as kubectl's:
//  - insecure-skip-tls-verify beside a CA is refused (kubectl: "specifying a root certificates
//    file with the insecure flag is not allowed");
//  - an http:// server with any credential (bearer token, exec plugin, client certificate) is
//    refused, so no credential ever crosses the network in clear;
//  - insecure-skip-tls-verify alone, and http:// without credentials, are allowed with a warning.
// Checked when a kubeconfig is loaded: user input is the only source of a server address and
// credentials (the in-cluster config is https by construction; tests build plain-http configs
// against the fake server on purpose).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"

namespace nodehook {

// kInvalid naming the rule broken; otherwise the warnings to log (possibly none).
Result<std::vector<std::string>> CheckTransportSecurity(const TransportConfig& config);

// Logs each warning of CheckTransportSecurity once, naming the server. Call at start.
void LogTransportWarnings(const TransportConfig& config, const std::vector<std::string>& warnings);

}  // namespace nodehook
