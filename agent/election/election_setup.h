// What the agent needs for cluster-singleton resources, worked out from the config and the pod
// it runs in (the DaemonSet passes POD_NAMESPACE and POD_UID from the downward API).
// Pure functions apart from reading `namespace_file`; thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/election/leader_election.h"

namespace nodehook {

// The service account's namespace, mounted into every pod.
inline constexpr const char* kServiceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

// Between SIGTERM and SIGKILL for a singleton hook whose term ended: the process runner's grace.
// Config validation keeps lease_renew_deadline_seconds + this + 1 s within the lease duration.
inline constexpr int kSingletonKillDelayMs = 2000;

bool HasSingletonResources(const Config& config);
// Whether the agent keeps Leases in tuning.lease_namespace: a singleton's, a rollout's, a ready
// condition's records and writer.
bool UsesLeases(const Config& config);

// tuning.lease_namespace, else `pod_namespace` ($POD_NAMESPACE), else the first line of
// `namespace_file`. kInvalid naming all three when none gives a namespace.
Result<std::string> ResolveLeaseNamespace(const Config& config, const std::string& pod_namespace,
                                          const std::string& namespace_file);

// Identity: the node name, plus "_" + `pod_uid` when given, so a replaced pod on the same node is
// a new holder. Timings: the lease_* knobs.
LeaderElectionOptions ElectionOptionsFor(const Config& config, const std::string& pod_uid);

}  // namespace nodehook
