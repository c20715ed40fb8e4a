// NodeDirectory: which Nodes exist in the cluster, for removing finalizers that belong to nodes
// that left. Lists Nodes at most once per `max_age`; thread-safe.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "agent/base/clock.h"
#include "agent/kube/kube_client.h"

namespace nodehook {

class NodeDirectory {
 public:
  NodeDirectory(KubeClient& client, Clock& clock, Duration max_age = std::chrono::seconds(30))
      : client_(client), clock_(clock), max_age_(max_age) {}

  // The node names as of at most `max_age` ago (a fresh list when older).
  Result<std::set<std::string>> Names();

 private:
  KubeClient& client_;
  Clock& clock_;
  const Duration max_age_;
  std::mutex mu_;
  std::set<std::string> names_;  // guarded by mu_
  TimePoint listed_at_{};        // guarded by mu_
  bool listed_ = false;          // guarded by mu_
};

}  // namespace nodehook
