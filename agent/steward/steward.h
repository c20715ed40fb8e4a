// Steward: the work that crosses nodes, done under its own ServiceAccount so that the node-bound
// admission rules can confine every agent to its own node (docs/security.md). Composed once from
// the agents' config (tuning.cross_node_writes "steward"):
//   finalizer resources   one watch each, a DepartedSweeper, a FinalizerKeeper that owns no
//                         finalizer, and the Node (and agent pod) watches that tell departures;
//   rollout resources     the rollout's coordination (its election among stewards, and the grants);
//   ready conditions      the writer of each resource's ready_condition (its election among stewards);
//   singleton resources   a LeaseJanitor that frees the singleton Lease once it expired.
// It runs no hook and keeps no state: several replicas may run; sweeps are guarded patches and the
// coordinators are elected. Run() on one thread; owns its threads; HealthSnapshot() from any.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/election/lease_janitor.h"
#include "agent/events/kube_event_recorder.h"
#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/finalizer_keeper.h"
#include "agent/finalizers/node_roster.h"
#include "agent/http/health.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_client.h"
#include "agent/readiness/ready_coordination.h"
#include "agent/rollout/coordinator/rollout_coordination.h"
#include "agent/steward/departed_sweeper.h"
#include "agent/watch/watch_sink_tee.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct StewardOptions {
  std::string identity;           // its pod's name: the coordinator election's identity, Events' reportingInstance
  std::string agents_namespace;   // where the agent pods (labelled nodehook.io/agent) run; "" = judge by Nodes only
  Duration recheck{std::chrono::seconds(10)};  // how often a deleting object's node finalizers are looked at again
};

class Steward {
 public:
  // `config` and `client` are borrowed and must outlive this.
  Steward(const Config& config, KubeClient& client, StewardOptions options);
  ~Steward();

  void Run(const CancelToken& stop);
  // Its watches, for /healthz and /readyz (http/health.h); thread-safe. Empty for a steward that
  // watches nothing (only a singleton Lease to look after).
  std::vector<WatchHealth> HealthSnapshot() const;

 private:
  void SetUpFinalizers(const Config& config, KubeClient& client);
  void SetUpRollouts(const Config& config, KubeClient& client);
  void SetUpReadiness(const Config& config, KubeClient& client);

  const StewardOptions options_;
  std::unique_ptr<KubeEventRecorder> events_;
  // Finalizer mode.
  std::unique_ptr<NodeRoster> node_roster_;
  std::unique_ptr<AgentPodRoster> pod_roster_;
  Duration not_ready_after_{0};
  std::vector<std::unique_ptr<Watcher>> watchers_;
  std::unique_ptr<FinalizerKeeper> keeper_;
  std::vector<std::unique_ptr<DepartedSweeper>> sweepers_;
  // Rollouts.
  std::vector<std::unique_ptr<RolloutCoordination>> coordinations_;
  // Ready conditions.
  std::vector<std::unique_ptr<ReadyCoordination>> ready_writers_;
  // Singleton.
  std::unique_ptr<KubeLeaseClient> singleton_lease_;
  std::unique_ptr<LeaseJanitor> janitor_;
};

}  // namespace nodehook
