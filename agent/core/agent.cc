#include "agent/core/agent.h"

#include <thread>

#include "agent/base/heap.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/core/finalizers.h"
#include "agent/core/shutdown_grace.h"
#include "agent/core/hook_metrics.h"
#include "agent/core/election_setup.h"
#include "agent/core/lease_deadline_file.h"

namespace nodehook {

std::string DefaultHookWorkDir(const std::string& state_file) {
  size_t slash = state_file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : state_file.substr(0, slash);
  if (dir.empty()) dir = "/";
  return dir + "/hook-scratch";
}

std::string HookWorkDir(const Config& config) {
  return config.tuning.hook_work_dir.empty() ? DefaultHookWorkDir(config.state_file) : config.tuning.hook_work_dir;
}

namespace {

// Free heap worth handing back to the kernel; below this the trim is not worth its walk.
constexpr size_t kReleasedHeapBytes = size_t{1} << 20;

std::vector<std::string> ResourceIds(const Config& config) {
  std::vector<std::string> ids;
  for (const auto& r : config.resources) ids.push_back(r.ref.Id());
  return ids;
}

ReconcilerOptions MakeReconcilerOptions(const Config& config) {
  ReconcilerOptions o;
  o.node_name = config.node_name;
  o.work_dir = HookWorkDir(config);
  o.retry_base = std::chrono::seconds(config.tuning.retry_base_seconds);
  o.retry_max = std::chrono::seconds(config.tuning.retry_max_seconds);
  o.retry_factor = config.tuning.retry_factor;
  o.retry_jitter = config.tuning.retry_jitter_percent / 100.0;
  o.retry_limit = config.tuning.retry_limit;
  o.retry_total = std::chrono::seconds(config.tuning.retry_total_seconds);
  o.in_progress_delay = std::chrono::seconds(config.tuning.in_progress_delay_seconds);
  o.metrics = &DefaultMetrics();
  // Long enough for a leader that fell right after a deletion to be replaced (lease duration
  // plus jittered retries), with room to spare: deletions in it may run twice, never not at all.
  o.singleton_delete_window = std::chrono::seconds(2 * config.tuning.lease_duration_seconds +
                                                   3 * config.tuning.lease_retry_period_seconds);
  return o;
}

}  // namespace

Agent::Agent(Config config, KubeClient& client, StateStore& store, ScheduleStore& schedule, ActionRunner& runner,
             Clock& clock)
    : config_(std::move(config)),
      client_(client),
      store_(store),
      clock_(clock),
      queue_(clock, QueueOptions{std::chrono::milliseconds(config_.tuning.batch_window_ms),
                                 std::chrono::milliseconds(config_.tuning.max_latency_ms), &DefaultMetrics()}),
      reconciler_(store, runner, clock, MakeReconcilerOptions(config_)),
      events_(client, clock, EventRecorderOptions{config_.node_name}),
      retry_inbox_(clock, RetryInboxOptions{}),
      state_metrics_(&DefaultMetrics(), clock, config_.state_file, ResourceIds(config_)),
      object_views_(store, clock, ObjectViewsPublisherOptions{}) {
  reconciler_.SetEventRecorder(&events_);
  reconciler_.SetKubeClient(&client_);
  WatcherOptions watcher_options;
  watcher_options.watch_timeout_seconds = config_.tuning.watch_timeout_seconds;
  watcher_options.resync_interval = std::chrono::seconds(config_.tuning.resync_seconds);
  watcher_options.backoff.initial = std::chrono::milliseconds(config_.tuning.reconnect_initial_ms);
  watcher_options.backoff.max = std::chrono::milliseconds(config_.tuning.reconnect_max_ms);
  watcher_options.metrics = &DefaultMetrics();
  // The config parser accepts only known names.
  watcher_options.list_strategy = ListStrategyFromName(config_.tuning.list_strategy).value_or(ListStrategy::kPaginated);
  // A state file that was damaged and replaced: adopt what the first lists show (docs/state.md).
  auto adopt = store.AdoptExistingPending();
  ResourceTracker::FirstListFn on_first_list;
  if (adopt.ok() && *adopt && config_.tuning.after_state_recovery != "adopt") {
    // Configured to rerun create hooks instead. If clearing the mark fails, the next start
    // decides again with the same setting, so a failure only needs saying.
    Status cleared = store.SetAdoptExisting(false);
    Log(LogLevel::kWarn, "not adopting existing objects",
        {{"node", config_.node_name}, {"error", cleared.ToString()},
         {"next", "run create hooks for every object (after_state_recovery=rerun)"}});
  } else if (adopt.ok() && *adopt) {
    reconciler_.ExpectAdoption(static_cast<int>(config_.resources.size()));
    on_first_list = [this](const std::vector<ObjectPtr>& items) {
      std::vector<std::string> uids;
      uids.reserve(items.size());
      for (const auto& item : items) uids.push_back(item->meta.uid);
      reconciler_.AdoptOnce(uids);
    };
    Log(LogLevel::kWarn, "adopting existing objects",
        {{"node", config_.node_name}, {"next", "store the first list's objects as handled, without create hooks"}});
  }
  for (size_t i = 0; i < config_.resources.size(); ++i) {
    const ResourceRef& ref = config_.resources[i].ref;
    bool record_events = config_.resources[i].hooks.count(kReasonEvent) > 0;
    trackers_.push_back(
        std::make_unique<ResourceTracker>(i, ref.Id(), queue_, store, clock_, on_first_list, record_events));
    trackers_.back()->SetQuarantineReporting(ref, &events_);
    if (config_.resources[i].hooks.count(kReasonSnapshot)) {
      trackers_.back()->SetOnChange([this, i] { periodic_->Changed(i); });
    }
    watchers_.push_back(std::make_unique<Watcher>(client_, ref, *trackers_.back(), clock_, watcher_options));
  }
  SetUpNodeWatch();
  std::vector<ObjectCache*> caches;
  for (auto& t : trackers_) caches.push_back(&t->cache());
  periodic_ = std::make_unique<PeriodicHooks>(
      config_, std::move(caches), HookWorkDir(config_),
      PeriodicHooksDeps{store, schedule, runner, reconciler_, clock_, queue_, &events_, targeting_.get(),
                        &DefaultMetrics()});
  RegisterMetrics();
}

void Agent::RegisterMetrics() {
  HookMetrics hooks(&DefaultMetrics());
  for (const auto& r : config_.resources) {
    for (const auto& [reason, spec] : r.hooks) hooks.Declare(r.ref.Id(), reason);
  }
  cache_collector_ = DefaultMetrics().AddCollector([this](Metrics& m) {
    for (size_t i = 0; i < trackers_.size(); ++i) {
      m.GetGauge("objects_cached", "Objects in the agent's cache (tombstones awaiting their delete hook included)",
                 {{"resource", config_.resources[i].ref.Id()}})
          .Set(static_cast<double>(trackers_[i]->cache().size()));
      m.GetGauge("objects_cached_with_bytes",
                 "Cached objects holding their whole object (not yet handled, or kept for finalizers or targeting)",
                 {{"resource", config_.resources[i].ref.Id()}})
          .Set(static_cast<double>(trackers_[i]->cache().with_bytes()));
    }
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

void Agent::SetUpNodeWatch() {
  bool targeting = false;
  bool finalizers = false;
  for (const auto& r : config_.resources) {
    targeting = targeting || !r.node_selector_path.empty();
    finalizers = finalizers || r.finalizer;
  }
  if (!targeting && !finalizers) return;
  std::vector<WatchSink*> sinks;
  ResourceRef node_ref{"", "v1", "nodes", "", ""};
  if (targeting) {
    node_labels_ = std::make_unique<NodeLabels>();
    node_sink_ = std::make_unique<NodeLabelsSink>(config_.node_name, *node_labels_);
    targeting_ = std::make_unique<KubeNodeTargeting>(*node_labels_);
    reconciler_.SetNodeTargeting(targeting_.get());
    node_labels_->SetOnChange([this](uint64_t) { RequeueTargeted(); });
    sinks.push_back(node_sink_.get());
    node_ref.field_selector = "metadata.name=" + config_.node_name;  // widened below for finalizers
  }
  if (finalizers) {
    node_roster_ = std::make_unique<NodeRoster>();
    finalizers_ = std::make_unique<FinalizerKeeper>(client_, config_.node_name, node_roster_.get());
    reconciler_.SetFinalizerKeeper(finalizers_.get());
    node_roster_->SetOnDeparted([this](const std::string& node) { RequeueDeletingWith(FinalizerName(node)); });
    sinks.push_back(node_roster_.get());
    node_ref.field_selector.clear();  // every Node: departures matter wherever they happen
  }
  node_tee_ = std::make_unique<WatchSinkTee>(sinks);
  WatcherOptions options;
  options.watch_timeout_seconds = config_.tuning.watch_timeout_seconds;
  options.metrics = &DefaultMetrics();
  node_watcher_ = std::make_unique<Watcher>(client_, node_ref, *node_tee_, clock_, options);
}

void Agent::RequeueDeletingWith(const std::string& finalizer) {
  for (size_t i = 0; i < trackers_.size(); ++i) {
    if (!config_.resources[i].finalizer) continue;
    for (const auto& uid : UidsDeletingWith(trackers_[i]->cache(), finalizer)) {
      queue_.AddNow(ResourceTracker::QueueKey(i, uid));
    }
  }
}

void Agent::RequeueTargeted() {
  RequeueWhere([](const WatchedResource& r) { return !r.node_selector_path.empty(); });
}

void Agent::RequeueWhere(const std::function<bool(const WatchedResource&)>& which) {
  for (size_t i = 0; i < trackers_.size(); ++i) {
    if (!which(config_.resources[i])) continue;
    for (const auto& uid : trackers_[i]->cache().Uids()) queue_.Add(ResourceTracker::QueueKey(i, uid));
    periodic_->Changed(i);
  }
}

void Agent::EnableLeaderElection(const LeaderElectionOptions& options) {
  lease_client_ = std::make_unique<KubeLeaseClient>(client_, config_.tuning.lease_namespace, config_.tuning.lease_name);
  elector_ = std::make_unique<LeaderElector>(*lease_client_, MonotonicClock::Instance(), options);
  // Singleton hooks run under `nodehook fence`, which reads the term's deadline from this file.
  std::string deadline_file = HookWorkDir(config_) + "/lease-deadline";
  elector_->SetOnStopBy([deadline_file](TimePoint stop_by) {
    Status written = WriteLeaseDeadline(deadline_file, ToMillis(stop_by));
    if (!written.ok()) {
      Log(LogLevel::kError, "lease deadline not written",
          {{"file", deadline_file}, {"error", written.ToString()},
           {"next", "singleton hooks stop at the old deadline, at the latest"}});
    }
  });
  reconciler_.SetLeadership(elector_.get(), {"/proc/self/exe", "fence", deadline_file,
                                             std::to_string(kSingletonKillDelayMs), "--"});
  Gauge& leader = DefaultMetrics().GetGauge(
      "leader", "1 while this agent holds the singleton Lease and may run singleton hooks",
      {{"lease", lease_client_->Describe()}});
  leader.Set(0);
  elector_->SetOnChange([this, &leader](bool leading) {
    leader.Set(leading ? 1 : 0);
    if (leading) RequeueSingletons();
  });
}

void Agent::RequeueSingletons() {
  RequeueWhere([](const WatchedResource& r) { return r.singleton; });
}

Agent::~Agent() { DefaultMetrics().RemoveCollector(cache_collector_); }

std::vector<WatchHealth> Agent::HealthSnapshot() const {
  std::vector<WatchHealth> out;
  if (node_watcher_) {
    const Watcher& w = *node_watcher_;
    std::string what = node_roster_ ? "nodes" : "node " + config_.node_name;
    out.push_back(WatchHealth{what, w.synced(), w.last_activity(), w.consecutive_failures(),
                              WatcherStateName(w.state())});
  }
  for (const auto& w : watchers_) {
    std::string state = WatcherStateName(w->state());
    std::string problem = w->problem();
    if (!problem.empty()) state += "; " + problem;
    out.push_back(WatchHealth{w->resource().Id(), w->synced(), w->last_activity(), w->consecutive_failures(), state});
  }
  return out;
}

void Agent::Run(const CancelToken& stop) {
  Log(LogLevel::kInfo, "agent started",
      {{"node", config_.node_name}, {"resources", watchers_.size()},
       {"workers", config_.tuning.workers}, {"next", "list and watch"}});
  CancelRegistration shut_down(stop, [this] {
    queue_.ShutDown();
    periodic_->ShutDown();
  });
  std::vector<std::thread> threads;
  for (auto& w : watchers_) threads.emplace_back([&w, &stop] { w->Run(stop); });
  if (node_watcher_) threads.emplace_back([this, &stop] { node_watcher_->Run(stop); });
  if (node_labels_) {
    // Until this node's labels are known, no targeted object could match: acting then would
    // run delete hooks for objects this node does own. So workers wait for the Node's first list.
    std::unique_lock<std::mutex> lock(housekeeping_mu_);
    while (!node_watcher_->synced() && !stop.cancelled()) {
      clock_.WaitUntil(housekeeping_cv_, lock, clock_.Now() + Duration(200), [&] { return stop.cancelled(); });
    }
  }
  // `stop` ends the watches and the workers' dequeuing; running hooks see only `hooks`, which
  // the grace cancels if they are still running when it is over.
  CancelToken hooks;
  ShutdownGrace grace(clock_, std::chrono::seconds(config_.tuning.shutdown_grace_seconds), stop);
  std::thread grace_thread([&] { grace.Run(hooks); });
  for (int i = 0; i < config_.tuning.workers; ++i) {
    threads.emplace_back([this, &stop, &hooks] { WorkerLoop(stop, hooks); });
  }
  periodic_->Start(threads, hooks);
  threads.emplace_back([this, &stop] { HousekeepingLoop(stop); });
  // The election outlives the workers: the Lease is released only once no singleton hook runs.
  CancelToken election_stop;
  std::thread election;
  if (elector_) election = std::thread([this, &election_stop] { elector_->Run(election_stop); });
  for (auto& t : threads) t.join();
  grace.WorkersDone();
  grace_thread.join();
  election_stop.Cancel();
  if (election.joinable()) election.join();
  Log(LogLevel::kInfo, "agent stopped", {{"node", config_.node_name}, {"next", "exit"}});
}

void Agent::ReportNodeProblem(const std::string& what, const std::string& message) {
  ObjectMeta node{"", "", config_.node_name, "", false};
  events_.PermanentFailure(ResourceRef{"", "v1", "nodes", "", ""}, node, what, message);
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
  for (size_t i = 0; i < trackers_.size(); ++i) {
    if (!trackers_[i]->cache().Contains(uid)) continue;
    queue_.AddNow(ResourceTracker::QueueKey(i, uid));
    periodic_->RunSoon(i, uid);
  }
}

void Agent::HousekeepingLoop(const CancelToken& stop) {
  CancelRegistration wake(stop, [this] {
    std::lock_guard<std::mutex> lock(housekeeping_mu_);
    housekeeping_cv_.notify_all();
  });
  retry_inbox_.SetWaker([this] {
    std::lock_guard<std::mutex> lock(housekeeping_mu_);
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
    ApplyRetryInbox(&wake_at);
    auto requests = store_.TakeRetryRequests();
    if (requests.ok() && !requests->empty()) object_views_.MarkChanged();
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
      object_views_.MarkChanged();
    }
    if (config_.tuning.objects_endpoint != "off") object_views_.RefreshIfDue();
    // After a big list, or once a backlog's bytes left the cache (object_cache.h).
    ReleaseFreeHeap(kReleasedHeapBytes);
    std::unique_lock<std::mutex> lock(housekeeping_mu_);
    clock_.WaitUntil(housekeeping_cv_, lock, wake_at, [&] { return stop.cancelled() || retry_offered_; });
    retry_offered_ = false;
  }
  retry_inbox_.SetWaker(nullptr);
}

void Agent::WorkerLoop(const CancelToken& stop, const CancelToken& hooks) {
  while (auto key = queue_.Get()) {
    size_t index = 0;
    std::string uid;
    if (ResourceTracker::ParseQueueKey(*key, &index, &uid) && index < trackers_.size()) {
      auto again = reconciler_.Reconcile(config_.resources[index], trackers_[index]->cache(), uid, hooks);
      object_views_.MarkChanged();
      periodic_->Reconciled(index, uid);
      if (again && !stop.cancelled()) queue_.AddAfter(*key, *again);
    }
    queue_.Done(*key);
  }
}

}  // namespace nodehook
