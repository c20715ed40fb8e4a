// Agent: wires one node's pipeline together and runs it.
//   Watcher (one thread per watched resource) -> ResourceTracker -> WorkQueue -> workers -> Reconciler
//   and beside the workers, PeriodicHooks: check threads and a snapshot thread
// Owns the threads, trackers, queue and reconciler; borrows the client, store, runner and clock,
// which must outlive it. Run() blocks; HealthSnapshot() may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "agent/actions/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/core/kube_event_recorder.h"
#include "agent/core/kube_node_targeting.h"
#include "agent/core/finalizer_keeper.h"
#include "agent/core/leader_election.h"
#include "agent/core/node_labels.h"
#include "agent/core/node_roster.h"
#include "agent/core/object_views_publisher.h"
#include "agent/core/periodic_hooks.h"
#include "agent/core/reconciler.h"
#include "agent/core/resource_tracker.h"
#include "agent/core/retry_inbox.h"
#include "agent/core/state_metrics.h"
#include "agent/core/watch_sink_tee.h"
#include "agent/core/watcher.h"
#include "agent/core/work_queue.h"
#include "agent/http/health.h"
#include "agent/kube/kube_client.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

class Agent {
 public:
  Agent(Config config, KubeClient& client, StateStore& store, ScheduleStore& schedule, ActionRunner& runner,
        Clock& clock);
  ~Agent();

  // Watches and reconciles until `stop` is cancelled. Then takes no new work, gives running
  // hooks tuning.shutdown_grace_seconds to finish, stops those still running (see
  // shutdown_grace.h), joins every thread and returns.
  void Run(const CancelToken& stop);

  // Per watched resource, what /healthz and /readyz judge by. Thread-safe.
  std::vector<WatchHealth> HealthSnapshot() const;

  // "Retry now" from an external system calling back (POST /v1/retry): queued, rate-limited
  // and merged per object (RetryInbox), then applied by the housekeeping thread, which makes the
  // object's pending handlers due (a permanent failure runs once more, StateStore::RequestRetry)
  // and looks at it at once. Never waits for the state store:
  // kTooManyRequests when too many objects are waiting. Thread-safe.
  Status RetryNow(const std::string& uid, const std::string& handler);

  // What GET /v1/objects serves: the latest snapshot of this node's state, refreshed by the
  // housekeeping thread (ObjectViewsPublisher). kUnavailable before the first one, or when
  // tuning.objects_endpoint is off. Thread-safe; never touches the store.
  Result<ObjectViewsPtr> ObjectViews() const;

  // Cluster-singleton resources: takes part in the election for the Lease
  // tuning.lease_namespace/lease_name (which must be resolved) with `options`' identity and
  // timings. Call before Run(); without it singleton hooks never run on this agent.
  void EnableLeaderElection(const LeaderElectionOptions& options);

  // An Event on this node's Node object about the agent itself, e.g. reason StateRecovered after
  // its state file was found damaged (KubeEventRecorder::Report). Thread-safe.
  void ReportNodeEvent(const std::string& action, const std::string& reason, bool warning, const std::string& note);

  // How soon the reconciler tries again after a state store write failed, asked each time
  // (e.g. StoreHealth::RetryDelay); without it, a fixed 5 s. Call before Run().
  void SetStoreRetryDelay(std::function<Duration()> delay) { reconciler_.SetStoreRetryDelay(std::move(delay)); }

 private:
  // Handles queued objects until `stop`; `hooks` stops the hooks it is running.
  void WorkerLoop(const CancelToken& stop, const CancelToken& hooks);
  // Applies retry requests (from the retry inbox, and those `nodehook state retry` left in the
  // store), and collects garbage.
  void HousekeepingLoop(const CancelToken& stop);
  // Writes what the retry inbox holds into the store; `*next_due` gets when more may be due.
  void ApplyRetryInbox(TimePoint* next_due);
  void EnqueueUid(const std::string& uid);
  // Node targeting: this node's labels changed, so every object of a targeted resource is
  // looked at again (one that stopped matching is handled as deleted here).
  void RequeueTargeted();
  // Finalizer mode: a node left, so objects still being deleted that carry its finalizer are
  // looked at again now (a resync does not requeue unchanged objects).
  void RequeueDeletingWith(const std::string& finalizer);
  // One Node watcher for whatever needs it: this node's labels (targeting; only this Node is
  // watched when that is all) and the cluster's nodes (finalizer mode).
  void SetUpNodeWatch();
  // A term started: every object of a singleton resource is looked at again.
  void RequeueSingletons();
  void RequeueWhere(const std::function<bool(const WatchedResource&)>& which);
  // nodehook_hook_runs_total at zero for every configured hook, nodehook_objects_cached.
  void RegisterMetrics();
  // The store's counts for StateMetrics, at most once a second (housekeeping thread).
  void RefreshStateMetrics(TimePoint* next_refresh);

  const Config config_;
  KubeClient& client_;
  StateStore& store_;
  Clock& clock_;
  WorkQueue queue_;
  Reconciler reconciler_;
  std::vector<std::unique_ptr<ResourceTracker>> trackers_;
  std::vector<std::unique_ptr<Watcher>> watchers_;
  KubeEventRecorder events_;
  // Set only when some resource targets nodes by selector.
  std::unique_ptr<NodeLabels> node_labels_;
  std::unique_ptr<NodeLabelsSink> node_sink_;
  // Set only when some resource is in finalizer mode.
  std::unique_ptr<NodeRoster> node_roster_;
  std::unique_ptr<FinalizerKeeper> finalizers_;
  std::unique_ptr<WatchSinkTee> node_tee_;  // both of the above
  std::unique_ptr<Watcher> node_watcher_;
  std::unique_ptr<KubeNodeTargeting> targeting_;
  std::mutex housekeeping_mu_;
  std::condition_variable housekeeping_cv_;
  bool retry_offered_ = false;  // guarded by housekeeping_mu_
  RetryInbox retry_inbox_;
  StateMetrics state_metrics_;
  Metrics::CollectorId cache_collector_ = 0;  // reads trackers_: removed in ~Agent
  ObjectViewsPublisher object_views_;
  // Set only by EnableLeaderElection().
  std::unique_ptr<KubeLeaseClient> lease_client_;
  std::unique_ptr<LeaderElector> elector_;
  // Periodic checks and node snapshots, on threads of their own (set up after node targeting).
  std::unique_ptr<PeriodicHooks> periodic_;
};

// Where hook input files go when the config does not say: next to the state file.
std::string DefaultHookWorkDir(const std::string& state_file);
// tuning.hook_work_dir, else DefaultHookWorkDir.
std::string HookWorkDir(const Config& config);

}  // namespace nodehook
