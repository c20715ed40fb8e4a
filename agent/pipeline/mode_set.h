// ModeSet: the modes of one agent, built once at start from the config and handed to each
// resource that uses them; resources that do not get the plain arms.
//   node targeting      NodeLabels from this Node's watch -> KubeNodeTargeting   (else EveryNode)
//   finalizer mode      NodeRoster from the Nodes' watch -> FinalizerKeeper      (else NoFinalizers)
//                       + AgentPodRoster from the agent pods' watch, when finalizer_release_after_seconds
//                       > 0 and the agent pods are known (app/ finds them from the agent's own pod)
//   cluster singleton   the Lease's LeaderElector -> SingletonGate               (else OpenGate)
//                       and the one cluster-wide finalizer -> SingletonFinalizer
//   fleet rollout       per resource with a policy: the watch of this node's Leases ->
//                       RolloutBoard -> RolloutGate                              (else NoRollout)
//                       + a RolloutParticipant: RolloutCoordination (the coordinator's election,
//                       and while elected the watch of every Lease of the rollout ->
//                       RolloutCoordinator), or with the steward a CoordinatorObserver (reads only)
// One Node watcher serves the first two (only this Node is watched when targeting is all).
// The sources of requeue triggers are exposed for the wiring (requeue_triggers.h) to register
// map functions on; nothing here calls back into the Agent.
// Owns everything it builds; borrows the client, store and clock. Thread-safe once built.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/election/leader_election.h"
#include "agent/election/singleton_gate.h"
#include "agent/events/event_recorder.h"
#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/finalizer_keeper.h"
#include "agent/finalizers/node_roster.h"
#include "agent/finalizers/singleton_finalizer.h"
#include "agent/hooks/hook_gate.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_client.h"
#include "agent/reconcile/finalizer_steps.h"
#include "agent/reconcile/rollout_steps.h"
#include "agent/rollout/board/rollout_board.h"
#include "agent/rollout/coordinator/rollout_coordination.h"
#include "agent/finalizers/own_finalizer_only.h"
#include "agent/rollout/node/rollout_gate.h"
#include "agent/nodework/kube_node_api.h"
#include "agent/nodework/node_steps.h"
#include "agent/nodework/retired_node_steps.h"
#include "agent/process/action_runner.h"
#include "agent/targeting/kube_node_targeting.h"
#include "agent/targeting/node_labels.h"
#include "agent/targeting/node_targeting.h"
#include "agent/watch/watch_sink_tee.h"
#include "agent/watch/watcher.h"
#include "storage/state_store.h"

namespace nodehook {

// What a rollout's node steps (nodework/) need besides the client: the runner of the reboot
// command, and the agent's own pod, which a drain never evicts.
struct NodeStepsDeps {
  ActionRunner* runner = nullptr;  // null: no resource may have node steps (tests)
  std::string self_pod;            // "namespace/name"; "" = not known
};

class ModeSet {
 public:
  // `election`: set when the agent takes part in the singleton Lease's election (the resources'
  // singleton hooks never run without it).
  // `agent_pods`: this DaemonSet's pods (namespace and label selector; finalizer mode judges
  // nodes by them). `events` hears of released finalizers. Both optional.
  ModeSet(const Config& config, KubeClient& client, StateStore& store, Clock& clock,
          std::optional<LeaderElectionOptions> election,
          const std::optional<ResourceRef>& agent_pods = std::nullopt, EventRecorder* events = nullptr,
          const NodeStepsDeps& node_steps = {});

  const NodeTargeting& TargetingFor(const WatchedResource& resource) const;
  FinalizerSteps& FinalizersFor(const WatchedResource& resource);
  HookGate& GateFor(const WatchedResource& resource);
  RolloutSteps& RolloutFor(const WatchedResource& resource);
  // What the periodic lanes judge "this node's object" by.
  const NodeTargeting& Targeting() const;

  // Requeue trigger sources; set before Run().
  void OnNodeLabelsChanged(std::function<void()> fn);
  // A Node left, or a node has had no agent pod for finalizer_release_after_seconds.
  void OnNodeDeparted(std::function<void(const std::string& finalizer)> fn);
  // Housekeeping: fires the departures of agents gone long enough (by the injected clock).
  void Tick(TimePoint now);
  void OnLeadershipChanged(std::function<void(bool leading)> fn);
  // The rollout's coordinator granted this node a slot for an object of `resource`.
  void OnRolloutGranted(const std::function<void(const WatchedResource& resource, const std::string& uid)>& fn);

  // The Node watcher, when some mode needs it (null otherwise), and what it watches.
  Watcher* node_watcher() { return node_watcher_.get(); }
  const Watcher* node_watcher() const { return node_watcher_.get(); }
  std::string NodeWatchName() const;
  bool waits_for_node_labels() const { return node_labels_ != nullptr; }
  // The agent pods' watcher, when finalizer mode judges nodes by them (null otherwise).
  Watcher* agent_pod_watcher() { return pod_watcher_.get(); }
  const Watcher* agent_pod_watcher() const { return pod_watcher_.get(); }
  LeaderElector* elector() { return elector_.get(); }
  // The watches of the rollout resources' Leases, one per resource with a policy.
  std::vector<Watcher*> rollout_watchers();
  std::vector<const Watcher*> rollout_watchers() const;
  // The identity and timings of this agent's elections (the singleton's, or else the config's).
  const LeaderElectionOptions& election_options() const { return election_; }
  // This Node: its uid and labels from the Node watch (unknown without one), or gone.
  NodePresence Presence() const;
  // Each rollout's part in its coordination (rollout_participant.h); Run by the agent.
  std::vector<RolloutParticipant*> rollout_participants();
  // At start, before the work: the node steps no rollout here finishes any more (an object deleted
  // while its cordon could not be given back; a rollout that no longer has node steps) give their
  // cordon back (retired_node_steps.h). Once; no API call when there are none.
  void GiveBackRetiredNodeSteps();

 private:
  void SetUpNodeWatch(const Config& config, KubeClient& client, Clock& clock,
                      const std::optional<ResourceRef>& agent_pods, EventRecorder* events);
  AgentWatch SetUpAgentPodWatch(const Config& config, KubeClient& client, Clock& clock, const ResourceRef& pods);
  void SetUpElection(const Config& config, KubeClient& client, StateStore& store, Clock& clock,
                     const LeaderElectionOptions& options);
  void SetUpRollouts(const Config& config, KubeClient& client, StateStore& store, EventRecorder& events,
                     const LeaderElectionOptions& election, const NodeStepsDeps& node_steps);

  // One resource's rollout: the board its Leases' watch fills, and the gate that reads it.
  struct Rollout {
    const WatchedResource* resource;
    std::unique_ptr<RolloutBoard> board;
    std::unique_ptr<Watcher> watcher;
    std::unique_ptr<RolloutGate> gate;
    // With node steps (cordon, drain, reboot): composed over the gate; what the pipeline gets.
    std::unique_ptr<NodeSteps> node_steps;
    std::unique_ptr<KubeLeaseClient> coordinator_lease;  // what a CoordinatorObserver reads
    std::unique_ptr<RolloutParticipant> participant;
    bool registered = false;
  };

  const std::string node_name_;
  const LeaderElectionOptions election_;
  StateStore& store_;
  // Node steps: this Node (every rollout's steps use it), and the entries whose steps are
  // composed here (records of any other entry are retired).
  std::unique_ptr<NodeApi> own_node_;
  std::vector<ResourceScope> stepping_;
  OpenGate open_gate_;
  NoFinalizers no_finalizers_;
  // Node targeting.
  std::unique_ptr<NodeLabels> node_labels_;
  std::unique_ptr<NodeLabelsSink> node_sink_;
  std::unique_ptr<KubeNodeTargeting> targeting_;
  // Finalizer mode.
  std::unique_ptr<NodeRoster> node_roster_;
  std::unique_ptr<AgentPodRoster> pod_roster_;
  Duration not_ready_after_{0};  // tuning.finalizer_release_not_ready_seconds; 0 = off
  std::unique_ptr<Watcher> pod_watcher_;
  std::unique_ptr<FinalizerKeeper> finalizers_;
  // With the steward (tuning.cross_node_writes): the keeper, but never another node's finalizer.
  std::unique_ptr<OwnFinalizerOnly> own_finalizer_only_;
  std::unique_ptr<WatchSinkTee> node_tee_;
  std::unique_ptr<Watcher> node_watcher_;
  // Cluster singletons.
  std::unique_ptr<KubeLeaseClient> lease_client_;
  std::unique_ptr<LeaderElector> elector_;
  std::unique_ptr<Leadership> never_leading_;  // singleton resources on an agent without election
  std::unique_ptr<SingletonGate> singleton_gate_;
  std::unique_ptr<SingletonFinalizer> singleton_finalizer_;
  std::function<void(bool)> on_leadership_;
  // Fleet rollouts.
  std::vector<Rollout> rollouts_;
};

}  // namespace nodehook
