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
      clock_(clock),
      queue_(clock, QueueOptions{std::chrono::milliseconds(config_.tuning.batch_window_ms),
                                 std::chrono::milliseconds(config_.tuning.max_latency_ms)}),
      reconciler_(store, runner, clock, MakeReconcilerOptions(config_)) {
  WatcherOptions watcher_options;
  watcher_options.watch_timeout_seconds = config_.tuning.watch_timeout_seconds;
  watcher_options.resync_interval = std::chrono::seconds(config_.tuning.resync_seconds);
  watcher_options.backoff.initial = std::chrono::milliseconds(config_.tuning.reconnect_initial_ms);
  watcher_options.backoff.max = std::chrono::milliseconds(config_.tuning.reconnect_max_ms);
  for (size_t i = 0; i < config_.resources.size(); ++i) {
    const ResourceRef& ref = config_.resources[i].ref;
    trackers_.push_back(std::make_unique<ResourceTracker>(i, ref.Id(), queue_, store));
    watchers_.push_back(std::make_unique<Watcher>(client_, ref, *trackers_.back(), clock_, watcher_options));
  }
}

Agent::~Agent() = default;

bool Agent::Ready() const {
  for (const auto& w : watchers_) {
    if (!w->synced()) return false;
  }
  return true;
}

std::vector<WatchHealth> Agent::HealthSnapshot() const {
  std::vector<WatchHealth> out;
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
  for (int i = 0; i < config_.tuning.workers; ++i) threads.emplace_back([this, &stop] { WorkerLoop(stop); });
  for (auto& t : threads) t.join();
  Log(LogLevel::kInfo, "agent stopped", {{"node", config_.node_name}, {"next", "exit"}});
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
