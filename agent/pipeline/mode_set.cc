#include "agent/pipeline/mode_set.h"

#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/election/election_setup.h"
#include "agent/election/lease_deadline_file.h"
#include "agent/finalizers/finalizers.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/coordinator/coordinator_observer.h"
#include "agent/rollout/rules/window.h"
#include "agent/pipeline/hook_work_dir.h"

namespace nodehook {
namespace {

// For singleton resources on an agent that takes no part in the election: never a term.
class NeverLeading final : public Leadership {
 public:
  std::shared_ptr<const CancelToken> TermIfMayStart() const override { return nullptr; }
};

// How long a follower keeps a deleted object's local state. No longer what decides whether a
// delete is owed (the singleton finalizer does): only objects handled before the finalizer
// existed, and deleted before a leader claimed it, still depend on it.
Duration SingletonDeleteWindow(const Config& config) {
  return std::chrono::seconds(2 * config.tuning.lease_duration_seconds + 3 * config.tuning.lease_retry_period_seconds);
}


}  // namespace

ModeSet::ModeSet(const Config& config, KubeClient& client, StateStore& store, Clock& clock,
                 std::optional<LeaderElectionOptions> election, const std::optional<ResourceRef>& agent_pods,
                 EventRecorder* events, const NodeStepsDeps& node_steps)
    : node_name_(config.node_name),
      election_(election ? *election : ElectionOptionsFor(config, "")),
      store_(store),
      own_node_(std::make_unique<KubeNodeApi>(client, config.node_name)) {
  SetUpNodeWatch(config, client, clock, agent_pods, events);
  SetUpRollouts(config, client, store, events ? *events : NoEvents(), election_, node_steps);
  // Every singleton resource keeps the one cluster-wide finalizer, whatever this agent's part in
  // the election: only a leader ever plans its steps.
  if (HasSingletonResources(config)) singleton_finalizer_ = std::make_unique<SingletonFinalizer>(client);
  if (election) {
    SetUpElection(config, client, store, clock, *election);
  } else if (HasSingletonResources(config)) {
    never_leading_ = std::make_unique<NeverLeading>();
    SingletonGateOptions gate;
    gate.delete_window = SingletonDeleteWindow(config);
    singleton_gate_ = std::make_unique<SingletonGate>(*never_leading_, client, store, clock, gate);
  }
}

void ModeSet::SetUpNodeWatch(const Config& config, KubeClient& client, Clock& clock,
                             const std::optional<ResourceRef>& agent_pods, EventRecorder* events) {
  bool targeting = false;
  bool finalizers = false;
  for (const auto& r : config.resources) {
    // A rollout's hold label is one of this Node's labels, as a node selector's are.
    // The ready records carry this Node's labels and name it their owner.
    targeting = targeting || !r.node_selector_path.empty() || r.rollout.has_value() || !r.ready_condition.empty();
    finalizers = finalizers || r.finalizer;
  }
  std::vector<WatchSink*> sinks;
  ResourceRef node_ref{"", "v1", "nodes", "", ""};
  if (targeting) {
    node_labels_ = std::make_unique<NodeLabels>();
    node_sink_ = std::make_unique<NodeLabelsSink>(config.node_name, *node_labels_);
    targeting_ = std::make_unique<KubeNodeTargeting>(*node_labels_);
    sinks.push_back(node_sink_.get());
    node_ref.field_selector = "metadata.name=" + config.node_name;  // widened below for finalizers
  }
  if (finalizers && config.tuning.cross_node_writes == "steward") {
    // Departures are the steward's to judge: this agent keeps only its own finalizer, and needs
    // no watch of every Node and agent pod for it.
    finalizers_ = std::make_unique<FinalizerKeeper>(client, config.node_name, nullptr);
    own_finalizer_only_ = std::make_unique<OwnFinalizerOnly>(*finalizers_);
    finalizers = false;
  }
  if (!targeting && !finalizers) return;
  if (finalizers) {
    node_roster_ = std::make_unique<NodeRoster>(&clock);
    AgentWatch agents;
    if (agent_pods && config.tuning.finalizer_release_after_seconds > 0) {
      agents = SetUpAgentPodWatch(config, client, clock, *agent_pods);
    }
    not_ready_after_ = std::chrono::seconds(config.tuning.finalizer_release_not_ready_seconds);
    finalizers_ = std::make_unique<FinalizerKeeper>(client, config.node_name, node_roster_.get(), agents, events,
                                                    NotReadyRule{not_ready_after_, &clock});
    sinks.push_back(node_roster_.get());
    node_ref.field_selector.clear();  // every Node: departures matter wherever they happen
  }
  node_tee_ = std::make_unique<WatchSinkTee>(sinks);
  node_watcher_ = std::make_unique<Watcher>(client, node_ref, *node_tee_, clock, TunedWatchOptions(config));
}

AgentWatch ModeSet::SetUpAgentPodWatch(const Config& config, KubeClient& client, Clock& clock,
                                       const ResourceRef& pods) {
  Duration release_after = std::chrono::seconds(config.tuning.finalizer_release_after_seconds);
  pod_roster_ = std::make_unique<AgentPodRoster>(clock, release_after);
  pod_watcher_ = std::make_unique<Watcher>(client, pods, *pod_roster_, clock, TunedWatchOptions(config));
  const Watcher* watcher = pod_watcher_.get();
  // Listed, and not failing now: otherwise its view of the pods may be stale.
  auto healthy = [watcher] { return watcher->synced() && watcher->consecutive_failures() == 0; };
  return AgentWatch{pod_roster_.get(), pods, healthy, &clock};
}

void ModeSet::SetUpElection(const Config& config, KubeClient& client, StateStore& store, Clock& clock,
                            const LeaderElectionOptions& options) {
  lease_client_ = std::make_unique<KubeLeaseClient>(client, config.tuning.lease_namespace, config.tuning.lease_name);
  elector_ = std::make_unique<LeaderElector>(*lease_client_, MonotonicClock::Instance(), options);
  // Singleton hooks run under `nodehook fence`, which reads the term's deadline from this file.
  std::string deadline_file = HookWorkDir(config) + "/lease-deadline";
  elector_->SetOnStopBy([deadline_file](TimePoint stop_by) {
    Status written = WriteLeaseDeadline(deadline_file, ToMillis(stop_by));
    if (!written.ok()) {
      Log(LogLevel::kError, "lease deadline not written",
          {{"file", deadline_file}, {"error", written.ToString()},
           {"next", "singleton hooks stop at the old deadline, at the latest"}});
    }
  });
  SingletonGateOptions gate;
  gate.fence = FenceArgv(deadline_file, kSingletonKillDelayMs);
  gate.delete_window = SingletonDeleteWindow(config);
  singleton_gate_ = std::make_unique<SingletonGate>(*elector_, client, store, clock, gate);
  Gauge& leader = DefaultMetrics().GetGauge(
      "leader", "1 while this agent holds the singleton Lease and may run singleton hooks",
      {{"lease", lease_client_->Describe()}});
  leader.Set(0);
  elector_->SetOnChange([this, &leader](bool leading) {
    leader.Set(leading ? 1 : 0);
    if (on_leadership_) on_leadership_(leading);
  });
}

void ModeSet::SetUpRollouts(const Config& config, KubeClient& client, StateStore& store, EventRecorder& events,
                            const LeaderElectionOptions& election, const NodeStepsDeps& node_steps) {
  for (const auto& r : config.resources) {
    if (!r.rollout) continue;
    Rollout rollout;
    rollout.resource = &r;
    rollout.board = std::make_unique<RolloutBoard>(MonotonicClock::Instance());
    ResourceRef leases = KubeLeaseClient::LeasesResource();
    leases.namespace_name = config.tuning.lease_namespace;
    // Only the Leases labelled for this node: the coordinator alone watches them all.
    leases.label_selector = std::string(kRolloutLabel) + "=" + RolloutIdOf(r.ref) + "," + kRolloutForLabel + "=" +
                            RolloutForValue(config.node_name);
    rollout.watcher =
        std::make_unique<Watcher>(client, leases, *rollout.board, SystemClock::Instance(), TunedWatchOptions(config));
    RolloutGateOptions gate;
    gate.node = config.node_name;
    gate.namespace_name = config.tuning.lease_namespace;
    gate.deadline_file = HookWorkDir(config) + "/rollout-" + RolloutIdOf(r.ref) + "-deadline";
    gate.fence = FenceArgv(gate.deadline_file, kSingletonKillDelayMs);
    const NodeLabels* labels = node_labels_.get();
    std::string hold = r.rollout->hold_label;
    gate.held = [labels, hold] {
      auto now = labels ? labels->Get() : std::nullopt;
      return now && now->count(hold) > 0;
    };
    gate.presence = [labels] {
      NodeIdentity node = labels ? labels->Identity() : NodeIdentity{};
      return NodePresence{node.uid, node.gone, labels ? labels->Get() : std::nullopt};
    };
    // The parser compiled these once already (and refused bad ones); this cannot fail but is checked.
    auto windows = std::make_shared<const Result<std::vector<CompiledWindow>>>(CompileWindows(
        r.rollout->windows, config.zoneinfo_dir.empty() ? kDefaultZoneInfoDir : config.zoneinfo_dir));
    if (!windows->ok()) {
      Log(LogLevel::kError, "rollout windows unusable",
          {{"resource", r.ref.Id()}, {"error", windows->status().ToString()}, {"next", "gated hooks never start"}});
    }
    gate.windows = [windows](int64_t now_ms) { return WindowsNow(*windows, now_ms); };
    RolloutCoordinationOptions coordination;
    coordination.election = election;
    // Every agent is a candidate: each attempt is one read per agent, so they try every four
    // leases (5,000 nodes: about 50 reads a second, not 1,500); the coordinator's standbys try
    // every retry period, so a coordinator that dies is replaced within a lease and a retry period.
    // Grants already made are slots that go on.
    coordination.election.acquire_period = election.lease_duration * 4;
    coordination.watch = TunedWatchOptions(config);
    coordination.coordinator.namespace_name = config.tuning.lease_namespace;
    coordination.coordinator.windows = gate.windows;
    // "agents": a candidate that coordinates while elected. "steward": the steward coordinates
    // (grants are writes in other nodes' names); this agent only reads its Lease's fleet size, as
    // often as a candidate would. Either way each node spreads its first asks by its place in the
    // order, over a time that grows with the fleet (rollout/node/rollout_gate.h): the asks do not all reach the
    // API server at once.
    if (config.tuning.cross_node_writes != "steward") {
      rollout.participant = std::make_unique<RolloutCoordination>(r, client, MonotonicClock::Instance(),
                                                                  ApiServerClock(), events, coordination);
    } else {
      rollout.coordinator_lease = std::make_unique<KubeLeaseClient>(client, config.tuning.lease_namespace,
                                                                    CoordinatorLeaseName(RolloutIdOf(r.ref)));
      rollout.participant = std::make_unique<CoordinatorObserver>(
          *rollout.coordinator_lease, MonotonicClock::Instance(), coordination.election.acquire_period);
    }
    RolloutParticipant* participant = rollout.participant.get();
    gate.fleet_size = [participant] { return participant->FleetSize(); };
    rollout.gate = std::make_unique<RolloutGate>(r, client, *rollout.board, MonotonicClock::Instance(),
                                                 ApiServerClock(), gate);
    if (r.rollout->HasNodeSteps() && node_steps.runner) {
      NodeStepsOptions steps;
      steps.rid = RolloutIdOf(r.ref);
      steps.self_pod = node_steps.self_pod;
      steps.boot_id_file = config.tuning.boot_id_file;
      rollout.node_steps = std::make_unique<NodeSteps>(r, *rollout.gate, *own_node_, store, *node_steps.runner,
                                                       SystemClock::Instance(), events, steps);
      stepping_.emplace_back(r.ref);
    }
    rollouts_.push_back(std::move(rollout));
  }
}

void ModeSet::GiveBackRetiredNodeSteps() {
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(store_, *own_node_, stepping_);
  if (outcome.given_back + outcome.kept + outcome.left == 0) return;
  Log(LogLevel::kInfo, "retired node steps looked at",
      {{"given_back", outcome.given_back}, {"kept_cordoned", outcome.kept}, {"left", outcome.left},
       {"next", outcome.left > 0 ? "try those left again at the next start" : "nothing more"}});
}

NodePresence ModeSet::Presence() const {
  NodeLabels* labels = node_labels_.get();
  NodeIdentity node = labels ? labels->Identity() : NodeIdentity{};
  return NodePresence{node.uid, node.gone, labels ? labels->Get() : std::nullopt};
}

std::vector<Watcher*> ModeSet::rollout_watchers() {
  std::vector<Watcher*> out;
  for (auto& r : rollouts_) out.push_back(r.watcher.get());
  return out;
}

std::vector<RolloutParticipant*> ModeSet::rollout_participants() {
  std::vector<RolloutParticipant*> out;
  for (auto& r : rollouts_) out.push_back(r.participant.get());
  return out;
}

std::vector<const Watcher*> ModeSet::rollout_watchers() const {
  std::vector<const Watcher*> out;
  for (const auto& r : rollouts_) out.push_back(r.watcher.get());
  return out;
}

RolloutSteps& ModeSet::RolloutFor(const WatchedResource& resource) {
  for (auto& r : rollouts_) {
    if (r.resource == &resource) return r.node_steps ? static_cast<RolloutSteps&>(*r.node_steps) : *r.gate;
  }
  return NoRolloutSteps();
}

const NodeTargeting& ModeSet::TargetingFor(const WatchedResource& resource) const {
  return resource.node_selector_path.empty() ? EveryNodeTargeting() : Targeting();
}

const NodeTargeting& ModeSet::Targeting() const {
  return targeting_ ? static_cast<const NodeTargeting&>(*targeting_) : EveryNodeTargeting();
}

FinalizerSteps& ModeSet::FinalizersFor(const WatchedResource& resource) {
  if (resource.singleton && singleton_finalizer_) return *singleton_finalizer_;
  if (resource.finalizer && own_finalizer_only_) return *own_finalizer_only_;
  if (resource.finalizer && finalizers_) return *finalizers_;
  return no_finalizers_;
}

HookGate& ModeSet::GateFor(const WatchedResource& resource) {
  if (resource.singleton && singleton_gate_) return *singleton_gate_;
  return open_gate_;
}

void ModeSet::OnNodeLabelsChanged(std::function<void()> fn) {
  if (node_labels_) node_labels_->SetOnChange([fn = std::move(fn)](uint64_t) { fn(); });
}

void ModeSet::OnNodeDeparted(std::function<void(const std::string& finalizer)> fn) {
  if (!node_roster_) return;
  if (pod_roster_) pod_roster_->SetOnDue(fn);
  node_roster_->SetOnDeparted([fn = std::move(fn)](const std::string& node) { fn(FinalizerName(node)); });
}

void ModeSet::Tick(TimePoint now) {
  if (pod_roster_) pod_roster_->FireDue(now);
  if (node_roster_ && not_ready_after_ > Duration::zero()) node_roster_->FireDue(now, not_ready_after_);
  for (auto& r : rollouts_) {
    // This node counts in the fleet once its Lease is there; written after the first list, so an
    // earlier result of this node is kept, not overwritten.
    if (r.registered || !r.board->listed()) continue;
    Status registered = r.gate->Register();
    r.registered = registered.ok();
    if (!registered.ok()) {
      Log(LogLevel::kWarn, "rollout node lease not written",
          {{"resource", r.resource->ref.Id()}, {"error", registered.ToString()}, {"next", "try again in 2s"}});
    }
  }
}

void ModeSet::OnLeadershipChanged(std::function<void(bool leading)> fn) { on_leadership_ = std::move(fn); }

void ModeSet::OnRolloutGranted(const std::function<void(const WatchedResource& resource, const std::string& uid)>& fn) {
  for (auto& r : rollouts_) {
    const WatchedResource* resource = r.resource;
    const std::string node = node_name_;
    RolloutGate* gate = r.gate.get();
    r.board->SetOnSlotNamed([fn, resource, node, gate](const RolloutLease& slot) {
      if (slot.holder != node) return;
      gate->NoteGrant(slot);  // before the wake-up: a grant gone by the time the worker comes is asked for again
      fn(*resource, slot.uid);
    });
  }
}

std::string ModeSet::NodeWatchName() const { return node_roster_ ? "nodes" : "node " + node_name_; }

}  // namespace nodehook
