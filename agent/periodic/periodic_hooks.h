// PeriodicHooks: the hooks that do not follow one object's changes (issue 12), wired for an Agent:
// the periodic "check" lane (check_lane.h) and the node "snapshot" lane (snapshot_lane.h), with
// their runners. Owns them; borrows everything else, which must outlive it. Creates no thread
// for a lane no resource uses. Thread-safe.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "agent/process/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/periodic/check_lane.h"
#include "agent/periodic/check_runner.h"
#include "agent/events/event_recorder.h"
#include "agent/targeting/node_targeting.h"
#include "agent/watch/object_cache.h"
#include "agent/hooks/retry_policy.h"
#include "agent/periodic/snapshot_lane.h"
#include "agent/periodic/snapshot_runner.h"
#include "agent/queue/work_queue.h"
#include "agent/outputs/own_tolerations.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

struct PeriodicHooksDeps {
  StateStore& store;
  ScheduleStore& schedule;
  ActionRunner& runner;
  RetryPolicy& policy;
  Clock& clock;
  WorkQueue& main_queue;
  EventRecorder* events = nullptr;           // null = no Events
  const NodeTargeting* targeting = nullptr;  // null = no node targeting
  Metrics* metrics = nullptr;
  std::shared_ptr<const OwnTolerations> own_tolerations{};  // null: not in a pod (outputs_recorder.h)
};

class PeriodicHooks {
 public:
  // `caches` are indexed like config.resources; `config` must outlive this.
  PeriodicHooks(const Config& config, std::vector<ObjectCache*> caches, const std::string& work_dir,
                PeriodicHooksDeps deps);

  // After a worker reconciled an object: it may now be checked periodically.
  void Reconciled(size_t index, const std::string& uid) { checks_->Track(index, uid); }
  // A retry request for the object: its check (if any) runs now.
  void RunSoon(size_t index, const std::string& uid) { checks_->RunSoon(index, uid); }
  // The resource was listed or one of its objects changed (or this node's labels did).
  void Changed(size_t index) { snapshots_->Changed(index); }

  // Starts the check and snapshot threads into `threads`; they return after ShutDown().
  void Start(std::vector<std::thread>& threads, const CancelToken& hooks);
  void ShutDown();

 private:
  CheckRunner check_runner_;
  std::unique_ptr<CheckLane> checks_;
  SnapshotRunner snapshot_runner_;
  std::unique_ptr<SnapshotLane> snapshots_;
};

}  // namespace nodehook
