#include "agent/election/election_setup.h"

#include <fstream>

namespace nodehook {

bool HasSingletonResources(const Config& config) {
  for (const auto& r : config.resources) {
    if (r.singleton) return true;
  }
  return false;
}

bool UsesLeases(const Config& config) {
  for (const auto& r : config.resources) {
    if (r.singleton || r.rollout || !r.ready_condition.empty()) return true;
  }
  return false;
}

Result<std::string> ResolveLeaseNamespace(const Config& config, const std::string& pod_namespace,
                                          const std::string& namespace_file) {
  if (!config.tuning.lease_namespace.empty()) return config.tuning.lease_namespace;
  if (!pod_namespace.empty()) return pod_namespace;
  std::ifstream in(namespace_file);
  std::string line;
  if (in && std::getline(in, line) && !line.empty()) return line;
  return InvalidError("the Leases' namespace is unknown: set tuning.lease_namespace "
                      "(--lease-namespace, NODEHOOK_LEASE_NAMESPACE) or POD_NAMESPACE, or run in a pod (" +
                      namespace_file + " is missing or empty)");
}

LeaderElectionOptions ElectionOptionsFor(const Config& config, const std::string& pod_uid) {
  LeaderElectionOptions o;
  o.identity = pod_uid.empty() ? config.node_name : config.node_name + "_" + pod_uid;
  o.lease_duration = std::chrono::seconds(config.tuning.lease_duration_seconds);
  o.renew_deadline = std::chrono::seconds(config.tuning.lease_renew_deadline_seconds);
  o.retry_period = std::chrono::seconds(config.tuning.lease_retry_period_seconds);
  o.takes_over = config.tuning.cross_node_writes != "steward";
  return o;
}

}  // namespace nodehook
