// Reading a kubeconfig user's `exec` section into an ExecPluginConfig, with kubectl's rules:
// command and apiVersion are required; apiVersion is client.authentication.k8s.io/v1 or
// v1beta1; interactiveMode is required for v1 (v1beta1 defaults to IfAvailable), and Always is
// refused because the agent never has a terminal; a command containing '/' is resolved against
// the kubeconfig's directory, a bare name is looked up in PATH when it runs.
// Pure function; thread-safe.
#pragma once

#include <optional>

#include "agent/base/status.h"
#include "agent/kube/credentials/exec_credential.h"
#include "agent/kube/credentials/kubeconfig_fields.h"

namespace nodehook {

// `exec` reads the user's exec mapping; `cluster` is what provideClusterInfo passes on.
Result<ExecPluginConfig> ReadExecPlugin(const FieldReader& exec, const std::string& user_name,
                                        const ExecClusterInfo& cluster);

}  // namespace nodehook
