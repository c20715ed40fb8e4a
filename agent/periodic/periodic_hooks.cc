#include "agent/periodic/periodic_hooks.h"

#include "agent/base/thread_name.h"

namespace nodehook {
namespace {

std::vector<const ObjectCache*> ReadOnly(const std::vector<ObjectCache*>& caches) {
  return std::vector<const ObjectCache*>(caches.begin(), caches.end());
}

}  // namespace

PeriodicHooks::PeriodicHooks(const Config& config, std::vector<ObjectCache*> caches, const std::string& work_dir,
                             PeriodicHooksDeps deps)
    : check_runner_(deps.store, deps.schedule, deps.runner, deps.policy, deps.clock,
                    CheckRunnerOptions{config.node_name, work_dir, 0, deps.metrics, deps.events,
                                       deps.targeting, deps.own_tolerations}),
      snapshot_runner_(deps.schedule, deps.runner, deps.policy, deps.clock,
                       SnapshotRunnerOptions{config.node_name, work_dir, deps.metrics, deps.events,
                                             deps.targeting}) {
  snapshots_ = std::make_unique<SnapshotLane>(
      config.resources, ReadOnly(caches), snapshot_runner_, deps.clock,
      SnapshotLaneOptions{std::chrono::milliseconds(config.tuning.batch_window_ms),
                          std::chrono::milliseconds(config.tuning.max_latency_ms)});
  checks_ = std::make_unique<CheckLane>(config.resources, std::move(caches), deps.main_queue, check_runner_,
                                        deps.schedule, deps.clock, config.tuning.max_concurrent_checks);
}

void PeriodicHooks::Start(std::vector<std::thread>& threads, const CancelToken& hooks) {
  if (checks_->enabled()) {
    for (int i = 0; i < checks_->threads(); ++i) {
      threads.push_back(NamedThread("nh-checks", [this, &hooks] { checks_->ThreadLoop(hooks); }));
    }
  }
  if (snapshots_->enabled()) {
    threads.push_back(NamedThread("nh-snapshots", [this, &hooks] { snapshots_->ThreadLoop(hooks); }));
  }
}

void PeriodicHooks::ShutDown() {
  checks_->ShutDown();
  snapshots_->ShutDown();
}

}  // namespace nodehook
