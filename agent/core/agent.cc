#include "agent/core/agent.h"

#include <thread>

#include "agent/base/log.h"

namespace nodehook {

std::string DefaultHookWorkDir(const std::string& state_file) {
  size_t slash = state_file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : state_file.substr(0, slash);
  if (dir.empty()) dir = "/";
  return dir + "/hook-scratch";
}

namespace {

ReconcilerOptions MakeReconcilerOptions(const Config& config) {
  ReconcilerOptions o;
  o.node_name = config.node_name;
  o.work_dir = config.tuning.hook_work_dir.empty() ? DefaultHookWorkDir(config.state_file)
                                                   : config.tuning.hook_work_dir;
  o.retry_base = std::chrono::seconds(config.tuning.retry_base_seconds);
  o.retry_max = std::chrono::seconds(config.tuning.retry_max_seconds);
  o.retry_factor = config.tuning.retry_factor;
  o.retry_jitter = config.tuning.retry_jitter_percent / 100.0;
  o.retry_limit = config.tuning.retry_limit;
  o.retry_total = std::chrono::seconds(config.tuning.retry_total_seconds);
  o.in_progress_delay = std::chrono::seconds(config.tuning.in_progress_delay_seconds);
  return o;
}

}  // namespace

Agent::Agent(Config config, KubeClient& client, StateStore& store, ActionRunner& runner, Clock& clock)
    : config_(std::move(config)),
      client_(client),
      store_(store),
      clock_(clock),
      queue_(clock, QueueOptions{std::chrono::milliseconds(config_.tuning.batch_window_ms),
                                 std::chrono::milliseconds(config_.tuning.max_latency_ms)}),
      reconciler_(store, runner, clock, MakeReconcilerOptions(config_)),
      nodes_(client, clock),
      events_(client, clock, EventRecorderOptions{config_.node_name}) {
  reconciler_.SetFinalizerSupport(&client_, &nodes_);
  reconciler_.SetEventRecorder(&events_);
  WatcherOptions watcher_options;
  watcher_options.watch_timeout_seconds = config_.tuning.watch_timeout_seconds;
  watcher_options.resync_interval = std::chrono::seconds(config_.tuning.resync_seconds);
  watcher_options.backoff.initial = std::chrono::milliseconds(config_.tuning.reconnect_initial_ms);
  watcher_options.backoff.max = std::chrono::milliseconds(config_.tuning.reconnect_max_ms);
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
    watchers_.push_back(std::make_unique<Watcher>(client_, ref, *trackers_.back(), clock_, watcher_options));
  }
  SetUpNodeTargeting();
}

void Agent::SetUpNodeTargeting() {
  bool wanted = false;
  for (const auto& r : config_.resources) wanted = wanted || !r.node_selector_path.empty();
  if (!wanted) return;
  node_labels_ = std::make_unique<NodeLabels>();
  node_sink_ = std::make_unique<NodeLabelsSink>(config_.node_name, *node_labels_);
  ResourceRef node_ref{"", "v1", "nodes", "", ""};
  node_ref.field_selector = "metadata.name=" + config_.node_name;
  WatcherOptions options;
  options.watch_timeout_seconds = config_.tuning.watch_timeout_seconds;
  node_watcher_ = std::make_unique<Watcher>(client_, node_ref, *node_sink_, clock_, options);
  targeting_ = std::make_unique<KubeNodeTargeting>(*node_labels_);
  reconciler_.SetNodeTargeting(targeting_.get());
  node_labels_->SetOnChange([this](uint64_t) { RequeueTargeted(); });
}

void Agent::RequeueTargeted() {
  for (size_t i = 0; i < trackers_.size(); ++i) {
    if (config_.resources[i].node_selector_path.empty()) continue;
    for (const auto& uid : trackers_[i]->cache().Uids()) queue_.Add(ResourceTracker::QueueKey(i, uid));
  }
}

Agent::~Agent() = default;

std::vector<WatchHealth> Agent::HealthSnapshot() const {
  std::vector<WatchHealth> out;
  if (node_watcher_) {
    const Watcher& w = *node_watcher_;
    out.push_back(WatchHealth{"node " + config_.node_name, w.synced(), w.last_activity(), w.consecutive_failures(),
                              WatcherStateName(w.state())});
  }
  for (const auto& w : watchers_) {
    out.push_back(WatchHealth{w->resource().Id(), w->synced(), w->last_activity(), w->consecutive_failures(),
                              WatcherStateName(w->state())});
  }
  return out;
}

void Agent::Run(const CancelToken& stop) {
  Log(LogLevel::kInfo, "agent started",
      {{"node", config_.node_name}, {"resources", std::to_string(watchers_.size())},
       {"workers", std::to_string(config_.tuning.workers)}, {"next", "list and watch"}});
  CancelRegistration shut_down(stop, [this] { queue_.ShutDown(); });
  std::vector<std::thread> threads;
  for (auto& w : watchers_) threads.emplace_back([&w, &stop] { w->Run(stop); });
  if (node_watcher_) {
    threads.emplace_back([this, &stop] { node_watcher_->Run(stop); });
    // Until this node's labels are known, no targeted object could match: acting then would
    // run delete hooks for objects this node does own. So workers wait for the Node's first list.
    std::unique_lock<std::mutex> lock(housekeeping_mu_);
    while (!node_watcher_->synced() && !stop.cancelled()) {
      clock_.WaitUntil(housekeeping_cv_, lock, clock_.Now() + Duration(200), [&] { return stop.cancelled(); });
    }
  }
  for (int i = 0; i < config_.tuning.workers; ++i) threads.emplace_back([this, &stop] { WorkerLoop(stop); });
  threads.emplace_back([this, &stop] { HousekeepingLoop(stop); });
  for (auto& t : threads) t.join();
  Log(LogLevel::kInfo, "agent stopped", {{"node", config_.node_name}, {"next", "exit"}});
}

void Agent::ReportNodeProblem(const std::string& what, const std::string& message) {
  ObjectMeta node{"", "", config_.node_name, "", false};
  events_.PermanentFailure(ResourceRef{"", "v1", "nodes", "", ""}, node, what, message);
}

Status Agent::RetryNow(const std::string& uid, const std::string& handler) {
  NODEHOOK_RETURN_IF_ERROR(store_.RequestRetry(uid, handler, ToMillis(clock_.Now())));
  EnqueueUid(uid);
  return Status::Ok();
}

void Agent::EnqueueUid(const std::string& uid) {
  for (size_t i = 0; i < trackers_.size(); ++i) {
    if (trackers_[i]->cache().Get(uid)) queue_.AddNow(ResourceTracker::QueueKey(i, uid));
  }
}

void Agent::HousekeepingLoop(const CancelToken& stop) {
  CancelRegistration wake(stop, [this] {
    std::lock_guard<std::mutex> lock(housekeeping_mu_);
    housekeeping_cv_.notify_all();
  });
  const Duration retry_poll = std::chrono::seconds(2);
  const Duration gc_interval = std::chrono::seconds(config_.tuning.gc_interval_seconds);
  TimePoint next_gc = clock_.Now() + gc_interval;
  while (!stop.cancelled()) {
    auto requests = store_.TakeRetryRequests();
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
      Log(stats.ok() ? LogLevel::kInfo : LogLevel::kWarn, "state garbage collected",
          {{"objects_purged", stats.ok() ? std::to_string(stats->objects_purged) : "0"},
           {"error", stats.ok() ? "" : stats.status().ToString()},
           {"next", "collect again in " + std::to_string(config_.tuning.gc_interval_seconds) + "s"}});
    }
    std::unique_lock<std::mutex> lock(housekeeping_mu_);
    clock_.WaitUntil(housekeeping_cv_, lock, clock_.Now() + retry_poll, [&] { return stop.cancelled(); });
  }
}

void Agent::WorkerLoop(const CancelToken& stop) {
  while (auto key = queue_.Get()) {
    size_t index = 0;
    std::string uid;
    if (ResourceTracker::ParseQueueKey(*key, &index, &uid) && index < trackers_.size()) {
      auto again = reconciler_.Reconcile(config_.resources[index], trackers_[index]->cache(), uid, stop);
      if (again && !stop.cancelled()) queue_.AddAfter(*key, *again);
    }
    queue_.Done(*key);
  }
}

}  // namespace nodehook
