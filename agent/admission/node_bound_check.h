// NodeBoundCheck: does the cluster confine this agent to its node? At start, and every hour after
// (someone may delete the rules), the agent asks the API server to dry-run a write the node-bound
// rules must refuse: an Event in another node's name (node_bound_policy.h). Nothing is stored
// either way. The answer:
//   protected    refused by a ValidatingAdmissionPolicy with the rules' message;
//   unprotected  accepted: any holder of this node's token may act for other nodes;
//   unknown      refused otherwise (RBAC, the API server unavailable).
// Not protected: asked again after a minute, doubling up to the hour (rules applied together with
// the agents are in force a moment later).
// It is the gauge nodehook_node_bound (1, 0, -1) and one log line per answer that changed
// ("node isolation checked"). Run() on one thread; Latest() from any.
#pragma once

#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

enum class NodeBound { kUnknown, kProtected, kUnprotected };
const char* NodeBoundName(NodeBound answer);

struct NodeBoundAnswer {
  NodeBound answer = NodeBound::kUnknown;
  std::string detail;  // the API server's words, cut short
};

struct NodeBoundCheckOptions {
  std::string node_name;
  Duration every{std::chrono::hours(1)};
  Duration unknown_retry{std::chrono::minutes(1)};
  Metrics* metrics = nullptr;  // null: no gauge
};

// The Event the check asks the API server to dry-run: about this node, in another node's name.
std::string SelfCheckEventJson(const std::string& node_name, TimePoint now);
// How the answer to that dry run reads.
NodeBoundAnswer JudgeSelfCheck(const Status& dry_run);

class NodeBoundCheck {
 public:
  // `client` and `clock` are borrowed and must outlive this.
  NodeBoundCheck(KubeClient& client, Clock& clock, NodeBoundCheckOptions options);

  NodeBoundAnswer CheckOnce();
  void Run(const CancelToken& stop);
  NodeBoundAnswer Latest() const;

 private:
  KubeClient& client_;
  Clock& clock_;
  const NodeBoundCheckOptions options_;
  Gauge* gauge_ = nullptr;
  mutable Mutex mu_;
  NodeBoundAnswer latest_ GUARDED_BY(mu_);
  bool checked_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
