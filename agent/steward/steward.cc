#include "agent/steward/steward.h"

#include <thread>

#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/election/election_setup.h"
#include "agent/finalizers/agent_pods.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/rules/window.h"

namespace nodehook {
Steward::Steward(const Config& config, KubeClient& client, StewardOptions options) : options_(std::move(options)) {
  events_ = std::make_unique<KubeEventRecorder>(client, SystemClock::Instance(), EventRecorderOptions{options_.identity});
  SetUpFinalizers(config, client);
  SetUpRollouts(config, client);
  SetUpReadiness(config, client);
  if (HasSingletonResources(config)) {
    singleton_lease_ = std::make_unique<KubeLeaseClient>(client, config.tuning.lease_namespace, config.tuning.lease_name);
    janitor_ = std::make_unique<LeaseJanitor>(*singleton_lease_, MonotonicClock::Instance(),
                                              std::chrono::seconds(config.tuning.lease_retry_period_seconds));
  }
}

Steward::~Steward() = default;

void Steward::SetUpFinalizers(const Config& config, KubeClient& client) {
  std::vector<const WatchedResource*> resources;
  for (const auto& r : config.resources) {
    if (r.finalizer && !r.singleton) resources.push_back(&r);
  }
  if (resources.empty()) return;
  Clock& clock = SystemClock::Instance();
  node_roster_ = std::make_unique<NodeRoster>(&clock);
  watchers_.push_back(std::make_unique<Watcher>(client, ResourceRef{"", "v1", "nodes", "", ""}, *node_roster_, clock,
                                                TunedWatchOptions(config)));
  AgentWatch agents;
  if (!options_.agents_namespace.empty() && config.tuning.finalizer_release_after_seconds > 0) {
    ResourceRef pods{"", "v1", "pods", options_.agents_namespace, kAgentPodLabel};
    pod_roster_ = std::make_unique<AgentPodRoster>(clock, std::chrono::seconds(config.tuning.finalizer_release_after_seconds));
    watchers_.push_back(std::make_unique<Watcher>(client, pods, *pod_roster_, clock, TunedWatchOptions(config)));
    const Watcher* watcher = watchers_.back().get();
    agents = AgentWatch{pod_roster_.get(), pods,
                        [watcher] { return watcher->synced() && watcher->consecutive_failures() == 0; }, &clock};
  }
  not_ready_after_ = std::chrono::seconds(config.tuning.finalizer_release_not_ready_seconds);
  // A keeper that owns no finalizer: the name "" is no node's (finalizers.h hashes it).
  keeper_ = std::make_unique<FinalizerKeeper>(client, "", node_roster_.get(), agents, events_.get(),
                                              NotReadyRule{not_ready_after_, &clock});
  for (const WatchedResource* r : resources) {
    sweepers_.push_back(std::make_unique<DepartedSweeper>(*r, *keeper_, clock, options_.recheck));
    watchers_.push_back(std::make_unique<Watcher>(client, r->ref, *sweepers_.back(), clock, TunedWatchOptions(config)));
  }
  auto wake = [this](const std::string&) {
    for (auto& s : sweepers_) s->Wake();
  };
  node_roster_->SetOnDeparted(wake);
  if (pod_roster_) pod_roster_->SetOnDue(wake);
}

void Steward::SetUpRollouts(const Config& config, KubeClient& client) {
  for (const auto& r : config.resources) {
    if (!r.rollout) continue;
    auto windows = std::make_shared<const Result<std::vector<CompiledWindow>>>(CompileWindows(
        r.rollout->windows, config.zoneinfo_dir.empty() ? kDefaultZoneInfoDir : config.zoneinfo_dir));
    RolloutCoordinationOptions coordination;
    coordination.election = ElectionOptionsFor(config, "");
    coordination.election.identity = options_.identity;
    // Stewards are few, and one that died must be replaced within a lease: they try every retry
    // period, and take over an expired coordinator Lease (no admission rule confines them).
    coordination.election.takes_over = true;
    coordination.watch = TunedWatchOptions(config);
    coordination.coordinator.namespace_name = config.tuning.lease_namespace;
    coordination.coordinator.windows = [windows](int64_t now_ms) { return WindowsNow(*windows, now_ms); };
    coordinations_.push_back(std::make_unique<RolloutCoordination>(r, client, MonotonicClock::Instance(),
                                                                   ApiServerClock(), *events_, coordination));
  }
}

std::vector<WatchHealth> Steward::HealthSnapshot() const {
  std::vector<WatchHealth> out;
  for (const auto& w : watchers_) {
    const ResourceRef& ref = w->resource();
    std::string id = ref.Id();
    if (!ref.label_selector.empty()) id += " " + ref.label_selector;
    std::string state = WatcherStateName(w->state());
    if (std::string problem = w->problem(); !problem.empty()) state += "; " + problem;
    out.push_back(WatchHealth{id, w->synced(), w->last_activity(), w->consecutive_failures(), state});
  }
  return out;
}

void Steward::SetUpReadiness(const Config& config, KubeClient& client) {
  for (const auto& r : config.resources) {
    if (r.ready_condition.empty()) continue;
    ReadyCoordinationOptions writer;
    writer.election = ElectionOptionsFor(config, "");
    writer.election.identity = options_.identity;
    writer.election.takes_over = true;  // as the rollout's coordinators: stewards are few
    writer.watch = TunedWatchOptions(config);
    writer.namespace_name = config.tuning.lease_namespace;
    ready_writers_.push_back(std::make_unique<ReadyCoordination>(r, client, MonotonicClock::Instance(), writer));
  }
}

void Steward::Run(const CancelToken& stop) {
  Log(LogLevel::kInfo, "steward started",
      {{"identity", options_.identity}, {"finalizer_resources", sweepers_.size()},
       {"rollouts", coordinations_.size()}, {"ready_conditions", ready_writers_.size()},
       {"singleton_lease", singleton_lease_ ? singleton_lease_->Describe() : ""},
       {"next", "sweep departed nodes' finalizers, coordinate rollouts, write ready conditions, free an expired "
                "singleton Lease"}});
  std::vector<std::thread> threads;
  for (auto& w : watchers_) threads.emplace_back([&w, &stop] { w->Run(stop); });
  for (auto& s : sweepers_) threads.emplace_back([&s, &stop] { s->Run(stop); });
  for (auto& c : coordinations_) threads.emplace_back([&c, &stop] { c->Run(stop); });
  for (auto& w : ready_writers_) threads.emplace_back([&w, &stop] { w->Run(stop); });
  if (janitor_) threads.emplace_back([this, &stop] { janitor_->Run(stop); });
  if (node_roster_) {
    // Agents gone long enough, and Nodes unready long enough, come due by time alone.
    threads.emplace_back([this, &stop] {
      do {
        TimePoint now = SystemClock::Instance().Now();
        if (pod_roster_) pod_roster_->FireDue(now);
        if (not_ready_after_ > Duration::zero()) node_roster_->FireDue(now, not_ready_after_);
      } while (SleepUnlessCancelled(SystemClock::Instance(), std::chrono::seconds(2), stop));
    });
  }
  for (auto& t : threads) t.join();
  Log(LogLevel::kInfo, "steward stopped", {{"identity", options_.identity}, {"next", "exit"}});
}

}  // namespace nodehook
