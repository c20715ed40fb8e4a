#include "agent/pipeline/agent.h"

#include <thread>

#include "agent/base/heap.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/base/thread_name.h"
#include "agent/finalizers/finalizers.h"
#include "agent/hooks/hook_metrics.h"
#include "agent/pipeline/shutdown_grace.h"

namespace nodehook {

namespace {

// Free heap worth handing back to the kernel; below this the trim is not worth its walk.
constexpr size_t kReleasedHeapBytes = size_t{1} << 20;

std::vector<std::string> ResourceIds(const Config& config) {
  std::vector<std::string> ids;
  for (const auto& r : config.resources) ids.push_back(r.ref.Id());
  return ids;
}

RetryOptions MakeRetryOptions(const Config& config, std::function<Duration()> store_backoff) {
  RetryOptions o;
  o.store_backoff = std::move(store_backoff);
  o.base = std::chrono::seconds(config.tuning.retry_base_seconds);
  o.max = std::chrono::seconds(config.tuning.retry_max_seconds);
  o.factor = config.tuning.retry_factor;
  o.jitter = config.tuning.retry_jitter_percent / 100.0;
  o.limit = config.tuning.retry_limit;
  o.total = std::chrono::seconds(config.tuning.retry_total_seconds);
  o.in_progress = std::chrono::seconds(config.tuning.in_progress_delay_seconds);
  return o;
}

WatcherOptions MakeWatcherOptions(const Config& config) {
  WatcherOptions o;
  o.watch_timeout_seconds = config.tuning.watch_timeout_seconds;
  o.resync_interval = std::chrono::seconds(config.tuning.resync_seconds);
  o.backoff.initial = std::chrono::milliseconds(config.tuning.reconnect_initial_ms);
  o.backoff.max = std::chrono::milliseconds(config.tuning.reconnect_max_ms);
  o.metrics = &DefaultMetrics();
  // The config parser accepts only known names.
  o.list_strategy = ListStrategyFromName(config.tuning.list_strategy).value_or(ListStrategy::kPaginated);
  return o;
}

// The settled resourceVersion of an object, which its resource's cache holds (entries of one
// resource in several namespaces share its id: the one whose cache settled the uid). `pipelines`
// is read at each lookup (it is filled after the publisher is built), until ~Agent detaches it.
std::shared_ptr<SettledLookup> MakeSettledLookup(const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines) {
  return std::make_shared<SettledLookup>([&pipelines](std::string_view resource, const std::string& uid) {
    for (const auto& p : pipelines) {
      if (p->config.ref.Id() != resource) continue;
      std::optional<SettledState> settled = p->tracker.cache().Settled(uid);
      if (settled) return settled->resource_version;
    }
    return std::string();
  });
}

// /v1/objects carries each object's settled resourceVersion through `settled`, which snapshots
// keep alive after the agent is gone.
ObjectViewsPublisherOptions ViewsOptions(std::shared_ptr<SettledLookup> settled, const NodeBoundCheck& node_bound) {
  ObjectViewsPublisherOptions options;
  options.node_bound = [&node_bound] { return std::string(NodeBoundName(node_bound.Latest().answer)); };
  options.settled_version = [settled = std::move(settled)](std::string_view resource, const std::string& uid) {
    return (*settled)(resource, uid);
  };
  return options;
}

RetirementOptions MakeRetirementOptions(const Config& config, AgentOptions& options,
                                        std::function<void(const std::string&, bool, const std::string&)> node_event) {
  RetirementOptions o;
  o.own_finalizer = FinalizerName(config.node_name);
  o.serving = DomainsServed(config);
  o.pods_on_other_revisions = std::move(options.pods_on_other_revisions);
  o.node_event = std::move(node_event);
  return o;
}

}  // namespace

Agent::Agent(Config config, KubeClient& client, StateStore& store, ScheduleStore& schedule, ActionRunner& runner,
             Clock& clock, AgentOptions options)
    : config_(std::move(config)),
      client_(client),
      store_(store),
      clock_(clock),
      queue_(clock, QueueOptions{std::chrono::milliseconds(config_.tuning.batch_window_ms),
                                 std::chrono::milliseconds(config_.tuning.max_latency_ms), &DefaultMetrics()}),
      events_(client, clock, EventRecorderOptions{config_.node_name}),
      retry_policy_(clock, MakeRetryOptions(config_, std::move(options.store_retry_delay))),
      reporter_(&DefaultMetrics(), events_),
      reconciler_(store, runner, clock, retry_policy_, reporter_,
                  ReconcilerOptions{config_.node_name, HookWorkDir(config_), options.own_tolerations}),
      modes_(config_, client, store, clock, std::move(options.election), options.agent_pods, &events_,
             NodeStepsDeps{&runner, options.self_pod}),
      retirement_(client, store, clock,
                  MakeRetirementOptions(config_, options,
                                        [this](const std::string& reason, bool warning, const std::string& note) {
                                          ReportNodeEvent("ReleaseRetired", reason, warning, note);
                                        })),
      node_bound_(client, clock, NodeBoundCheckOptions{config_.node_name, std::chrono::hours(1),
                                                       std::chrono::minutes(1), &DefaultMetrics()}),
      retry_inbox_(clock, RetryInboxOptions{}),
      state_metrics_(&DefaultMetrics(), clock, config_.state_file, ResourceIds(config_)),
      settled_(MakeSettledLookup(pipelines_)),
      object_views_(store, clock, ViewsOptions(settled_, node_bound_)),
      requeue_(queue_, pipelines_, [this](size_t index) { periodic_->Changed(index); }) {
  WatcherOptions watcher_options = MakeWatcherOptions(config_);
  ResourceTracker::FirstListFn on_first_list = AdoptionAfterRecovery();
  for (size_t i = 0; i < config_.resources.size(); ++i) {
    const WatchedResource& resource = config_.resources[i];
    pipelines_.push_back(std::make_unique<ResourcePipeline>(i, resource, client_, queue_, store, clock_, modes_,
                                                            watcher_options, on_first_list));
    pipelines_.back()->tracker.SetQuarantineReporting(resource.ref, &events_);
    if (resource.hooks.count(kReasonSnapshot)) {
      pipelines_.back()->tracker.SetOnChange([this, i] { periodic_->Changed(i); });
    }
  }
  requeue_.RegisterOn(modes_);
  std::vector<ObjectCache*> caches;
  for (auto& p : pipelines_) caches.push_back(&p->tracker.cache());
  periodic_ = std::make_unique<PeriodicHooks>(
      config_, std::move(caches), HookWorkDir(config_),
      PeriodicHooksDeps{store, schedule, runner, retry_policy_, clock_, queue_, &events_, &modes_.Targeting(),
                        &DefaultMetrics(), options.own_tolerations});
  node_outputs_ = MakeNodeOutputsWriter(config_, client_, pipelines_, object_views_, store_, clock_);
  readiness_ = std::make_unique<Readiness>(config_, client_, pipelines_, object_views_, modes_);
  RegisterMetrics();
}

ResourceTracker::FirstListFn Agent::AdoptionAfterRecovery() {
  auto adopt = store_.AdoptExistingPending();
  if (!adopt.ok() || !*adopt) return nullptr;
  if (config_.tuning.after_state_recovery != "adopt") {
    // Configured to rerun create hooks instead. If clearing the mark fails, the next start
    // decides again with the same setting, so a failure only needs saying.
    Status cleared = store_.SetAdoptExisting(false);
    Log(LogLevel::kWarn, "not adopting existing objects",
        {{"node", config_.node_name}, {"error", cleared.ToString()},
         {"next", "run create hooks for every object (after_state_recovery=rerun)"}});
    return nullptr;
  }
  reconciler_.ExpectAdoption(static_cast<int>(config_.resources.size()));
  Log(LogLevel::kWarn, "adopting existing objects",
      {{"node", config_.node_name}, {"next", "store the first list's objects as handled, without create hooks"}});
  return [this](const std::vector<ObjectPtr>& items) {
    std::vector<std::string> uids;
    uids.reserve(items.size());
    for (const auto& item : items) uids.push_back(item->meta.uid);
    reconciler_.AdoptOnce(uids);
  };
}

void Agent::RegisterMetrics() {
  HookMetrics hooks(&DefaultMetrics());
  for (const auto& r : config_.resources) {
    for (const auto& [reason, spec] : r.hooks) hooks.Declare(r.ref.Id(), reason);
  }
  cache_collector_ = DefaultMetrics().AddCollector([this](Metrics& m) {
    for (const auto& p : pipelines_) {
      m.GetGauge("objects_cached", "Objects in the agent's cache (tombstones awaiting their delete hook included)",
                 {{"resource", p->config.ref.Id()}})
          .Set(static_cast<double>(p->tracker.cache().size()));
      m.GetGauge("objects_cached_with_bytes",
                 "Cached objects holding their whole object (not yet handled, or kept for finalizers or targeting)",
                 {{"resource", p->config.ref.Id()}})
          .Set(static_cast<double>(p->tracker.cache().with_bytes()));
    }
    m.GetGauge("retired_finalizer_domains",
               "Resources (and modes) this node no longer serves whose finalizers it has not released yet")
        .Set(static_cast<double>(retirement_.pending()));
  });
}

void Agent::RefreshStateMetrics(TimePoint* next_refresh) {
  if (clock_.Now() < *next_refresh) return;
  *next_refresh = clock_.Now() + std::chrono::seconds(1);
  auto summary = store_.Summarize();
  if (summary.ok()) {
    state_metrics_.Refresh(std::move(summary).value());
  } else {
    Log(LogLevel::kWarn, "state metrics not refreshed",
        {{"error", summary.status().ToString()}, {"next", "keep the previous counts; try again in 2s"}});
  }
}

Agent::~Agent() {
  DefaultMetrics().RemoveCollector(cache_collector_);
  settled_->Detach();  // a snapshot an HTTP answer still holds must not read the caches any more
}

std::vector<WatchHealth> Agent::HealthSnapshot() const {
  std::vector<WatchHealth> out;
  if (const Watcher* node = modes_.node_watcher()) {
    out.push_back(WatchHealth{modes_.NodeWatchName(), node->synced(), node->last_activity(),
                              node->consecutive_failures(), WatcherStateName(node->state())});
  }
  if (const Watcher* pods = modes_.agent_pod_watcher()) {
    out.push_back(WatchHealth{"agent pods", pods->synced(), pods->last_activity(), pods->consecutive_failures(),
                              WatcherStateName(pods->state())});
  }
  for (const Watcher* leases : modes_.rollout_watchers()) {
    out.push_back(WatchHealth{"rollout leases " + leases->resource().label_selector, leases->synced(),
                              leases->last_activity(), leases->consecutive_failures(),
                              WatcherStateName(leases->state())});
  }
  for (const auto& p : pipelines_) {
    const Watcher& w = p->watcher;
    std::string state = WatcherStateName(w.state());
    std::string problem = w.problem();
    if (!problem.empty()) state += "; " + problem;
    out.push_back(WatchHealth{w.resource().Id(), w.synced(), w.last_activity(), w.consecutive_failures(), state});
  }
  return out;
}

void Agent::Run(const CancelToken& stop) {
  Log(LogLevel::kInfo, "agent started",
      {{"node", config_.node_name}, {"resources", pipelines_.size()},
       {"workers", config_.tuning.workers}, {"allocator", HeapAllocatorName()}, {"next", "list and watch"}});
  CancelRegistration shut_down(stop, [this] {
    queue_.ShutDown();
    periodic_->ShutDown();
  });
  // Before any claim: the state file learns which finalizers this node may hold from now on.
  Status recorded = retirement_.Load();
  if (!recorded.ok()) {
    Log(LogLevel::kWarn, "finalizer domains not recorded",
        {{"error", recorded.ToString()}, {"next", "try again shortly, beside the work"}});
  }
  // Before any object's steps: cordons that no rollout here gives back any more are given back.
  modes_.GiveBackRetiredNodeSteps();
  std::vector<std::thread> threads;
  threads.push_back(NamedThread("nh-retirement", [this, &stop] { retirement_.Run(stop); }));
  threads.push_back(NamedThread("nh-node-bound", [this, &stop] { node_bound_.Run(stop); }));
  if (node_outputs_) threads.push_back(NamedThread("nh-node-outputs", [this, &stop] { node_outputs_->Run(stop); }));
  readiness_->Start(threads, stop);
  StartWatches(threads, stop);
  if (modes_.waits_for_node_labels()) {
    // Until this node's labels are known, no targeted object could match: acting then would
    // run delete hooks for objects this node does own. So workers wait for the Node's first list.
    MutexLock lock(&housekeeping_mu_);
    while (!modes_.node_watcher()->synced() && !stop.cancelled()) {
      WaitUntil(clock_, housekeeping_cv_, housekeeping_mu_, clock_.Now() + Duration(200),
                [&] { return stop.cancelled(); });
    }
  }
  // `stop` ends the watches and the workers' dequeuing; running hooks see only `hooks`, which
  // the grace cancels if they are still running when it is over.
  CancelToken hooks;
  ShutdownGrace grace(clock_, std::chrono::seconds(config_.tuning.shutdown_grace_seconds), stop);
  std::thread grace_thread = NamedThread("nh-grace", [&] { grace.Run(hooks); });
  for (int i = 0; i < config_.tuning.workers; ++i) {
    threads.push_back(
        NamedThread("nh-worker-" + std::to_string(i), [this, &stop, &hooks] { WorkerLoop(stop, hooks); }));
  }
  periodic_->Start(threads, hooks);
  threads.push_back(NamedThread("nh-housekeeping", [this, &stop] { HousekeepingLoop(stop); }));
  // The election outlives the workers: the Lease is released only once no singleton hook runs.
  CancelToken election_stop;
  std::thread election;
  if (LeaderElector* elector = modes_.elector()) {
    election = NamedThread("nh-election", [elector, &election_stop] { elector->Run(election_stop); });
  }
  for (auto& t : threads) t.join();
  grace.WorkersDone();
  grace_thread.join();
  election_stop.Cancel();
  if (election.joinable()) election.join();
  Log(LogLevel::kInfo, "agent stopped", {{"node", config_.node_name}, {"next", "exit"}});
}

void Agent::StartWatches(std::vector<std::thread>& threads, const CancelToken& stop) {
  for (auto& p : pipelines_) {
    threads.push_back(NamedThread("nh-watch-" + std::to_string(p->index), [&p, &stop] { p->watcher.Run(stop); }));
  }
  if (Watcher* nodes = modes_.node_watcher()) {
    threads.push_back(NamedThread("nh-watch-node", [nodes, &stop] { nodes->Run(stop); }));
  }
  if (Watcher* pods = modes_.agent_pod_watcher()) {
    threads.push_back(NamedThread("nh-watch-pods", [pods, &stop] { pods->Run(stop); }));
  }
  for (Watcher* leases : modes_.rollout_watchers()) {
    threads.push_back(NamedThread("nh-watch-leases", [leases, &stop] { leases->Run(stop); }));
  }
  for (RolloutParticipant* p : modes_.rollout_participants()) {
    threads.push_back(NamedThread("nh-rollout", [p, &stop] { p->Run(stop); }));
  }
}

void Agent::ObjectWritten(const std::string& uid) {
  if (uid.empty()) {
    object_views_.MarkAllChanged();
  } else {
    object_views_.MarkChanged(uid);
  }
}

void Agent::ReportNodeEvent(const std::string& action, const std::string& reason, bool warning,
                            const std::string& note) {
  ObjectMeta node{"", "", config_.node_name, "", false};
  events_.Report(ResourceRef{"", "v1", "nodes", "", ""}, node, action, reason, warning, note);
}

Result<ObjectViewsPtr> Agent::ObjectViews() const {
  if (config_.tuning.objects_endpoint == "off") return UnavailableError("objects_endpoint is off");
  return object_views_.Latest();
}

Status Agent::RetryNow(const std::string& uid, const std::string& handler) {
  return retry_inbox_.Offer(uid, handler);
}

void Agent::ApplyRetryInbox(TimePoint* next_due) {
  for (const RetryAsk& ask : retry_inbox_.TakeDue(next_due)) {
    // Recorded like `nodehook state retry`, so TakeRetryRequests below enqueues it.
    auto retried = store_.RequestRetry(ask.uid, ask.handler, ToMillis(clock_.Now()));
    if (retried.ok()) {
      for (const RetriedHandler& r : *retried) {
        if (!r.revived) continue;
        Log(LogLevel::kInfo, "permanent failure revived",
            {{"uid", ask.uid}, {"handler", r.handler}, {"retries", r.retries},
             {"next", "run it once more; a new failure gives up again"}});
      }
      continue;
    }
    const Status& st = retried.status();
    bool nothing = st.code() == StatusCode::kNotFound;
    Log(nothing ? LogLevel::kInfo : LogLevel::kWarn, nothing ? "retry request ignored" : "retry request not applied",
        {{"uid", ask.uid}, {"handler", ask.handler.empty() ? "all" : ask.handler}, {"error", st.ToString()},
         {"next", nothing ? "nothing pending or failed that could run for it on this node" : "try again shortly"}});
    if (!nothing) retry_inbox_.PutBack(ask);
  }
}

void Agent::EnqueueUid(const std::string& uid) {
  for (const auto& p : pipelines_) {
    if (!p->tracker.cache().Contains(uid)) continue;
    queue_.AddNow(p->Key(uid));
    periodic_->RunSoon(p->index, uid);
  }
}

void Agent::HousekeepingLoop(const CancelToken& stop) {
  CancelRegistration wake(stop, [this] {
    MutexLock lock(&housekeeping_mu_);
    housekeeping_cv_.notify_all();
  });
  retry_inbox_.SetWaker([this] {
    MutexLock lock(&housekeeping_mu_);
    retry_offered_ = true;
    housekeeping_cv_.notify_all();
  });
  const Duration retry_poll = std::chrono::seconds(2);
  const Duration gc_interval = std::chrono::seconds(config_.tuning.gc_interval_seconds);
  TimePoint next_gc = clock_.Now() + gc_interval;
  TimePoint next_metrics = clock_.Now();
  while (!stop.cancelled()) {
    TimePoint wake_at = clock_.Now() + retry_poll;
    RefreshStateMetrics(&next_metrics);
    queue_.Trim();
    modes_.Tick(clock_.Now());  // agents gone long enough: their nodes' finalizers may come off
    ApplyRetryInbox(&wake_at);
    auto requests = store_.TakeRetryRequests();
    if (requests.ok() && !requests->empty()) object_views_.MarkAllChanged();
    if (requests.ok()) {
      for (const auto& r : *requests) {
        Log(LogLevel::kInfo, "retry requested",
            {{"uid", r.uid}, {"handler", r.handler.empty() ? "all" : r.handler}, {"next", "handle now"}});
        EnqueueUid(r.uid);
      }
    }
    if (clock_.Now() >= next_gc) {
      next_gc = clock_.Now() + gc_interval;
      if (config_.tuning.tombstone_ttl_seconds > 0) {
        auto expired =
            store_.ExpireTombstones(ToMillis(clock_.Now()), int64_t{config_.tuning.tombstone_ttl_seconds} * 1000);
        for (const auto& uid : expired.ok() ? *expired : std::vector<std::string>()) {
          Log(LogLevel::kError, "deletion given up",
              {{"uid", uid}, {"handler", kReasonDelete},
               {"reason", "gone for longer than tombstone_ttl_seconds with its delete hook failing"},
               {"next", "forget the object"}});
        }
      }
      auto stats = store_.CollectGarbage(ToMillis(clock_.Now()), int64_t{config_.tuning.gone_ttl_seconds} * 1000);
      if (stats.ok()) state_metrics_.GarbageCollected(stats->objects_purged);
      Log(stats.ok() ? LogLevel::kInfo : LogLevel::kWarn, "state garbage collected",
          {{"objects_purged", stats.ok() ? std::to_string(stats->objects_purged) : "0"},
           {"error", stats.ok() ? "" : stats.status().ToString()},
           {"next", "collect again in " + std::to_string(config_.tuning.gc_interval_seconds) + "s"}});
      object_views_.MarkAllChanged();
    }
    // The snapshot serves /v1/objects, and the node conditions derive from it.
    if (config_.tuning.objects_endpoint != "off" || node_outputs_ || !readiness_->empty()) {
      object_views_.RefreshIfDue();
    }
    // After a big list, or once a backlog's bytes left the cache (object_cache.h).
    ReleaseFreeHeap(kReleasedHeapBytes);
    MutexLock lock(&housekeeping_mu_);
    WaitUntil(clock_, housekeeping_cv_, housekeeping_mu_, wake_at, [&] {
      housekeeping_mu_.AssertHeld();
      return stop.cancelled() || retry_offered_;
    });
    retry_offered_ = false;
  }
  retry_inbox_.SetWaker(nullptr);
}

void Agent::WorkerLoop(const CancelToken& stop, const CancelToken& hooks) {
  while (auto key = queue_.Get()) {
    if (key->resource < pipelines_.size()) {
      auto again = reconciler_.Reconcile(pipelines_[key->resource]->context, key->uid, hooks);
      // Also without a write: the settled resourceVersion the snapshot shows may have moved.
      object_views_.MarkChanged(key->uid);
      periodic_->Reconciled(key->resource, key->uid);
      if (again && !stop.cancelled()) queue_.AddAfter(*key, *again);
    }
    queue_.Done(*key);
  }
}

}  // namespace nodehook
