// Agent: wires one node's pipeline together and runs it.
//   per watched resource (ResourcePipeline): Watcher thread -> ResourceTracker -> ObjectCache
//   -> WorkQueue -> workers -> Reconciler (Decide, then the PlanExecutor) in the resource's context
//   and beside the workers, PeriodicHooks: check threads and a snapshot thread, and the
//   NodeOutputsWriter of the resources that keep outputs on this Node.
// The modes (ModeSet) are built once from the config; requeue triggers (RequeueTriggers) are
// map functions registered on their sources. Owns the threads, pipelines, queue and reconciler;
// borrows the client, store, runner and clock, which must outlive it. Run() blocks;
// HealthSnapshot() may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <vector>

#include "agent/admission/node_bound_check.h"
#include "agent/base/mutex.h"
#include "agent/process/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/events/kube_event_recorder.h"
#include "agent/finalizers/finalizer_retirement.h"
#include "agent/hooks/outcome_reporter.h"
#include "agent/hooks/retry_policy.h"
#include "agent/http/health.h"
#include "agent/kube/client/kube_client.h"
#include "agent/periodic/periodic_hooks.h"
#include "agent/pipeline/hook_work_dir.h"
#include "agent/pipeline/mode_set.h"
#include "agent/pipeline/node_outputs.h"
#include "agent/pipeline/readiness.h"
#include "agent/pipeline/object_views_publisher.h"
#include "agent/pipeline/requeue_triggers.h"
#include "agent/pipeline/resource_pipeline.h"
#include "agent/pipeline/settled_lookup.h"
#include "agent/pipeline/state_metrics.h"
#include "agent/queue/retry_inbox.h"
#include "agent/queue/work_queue.h"
#include "agent/reconcile/reconciler.h"
#include "agent/outputs/own_tolerations.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

// What an agent may be given besides its config and collaborators.
struct AgentOptions {
  // Cluster-singleton resources take part in the election for the Lease
  // tuning.lease_namespace/lease_name (which must be resolved) with this identity and these
  // timings; without it their hooks never run on this agent.
  std::optional<LeaderElectionOptions> election;
  // How soon every lane tries again after a state store write failed, asked each time (e.g.
  // StoreHealth::RetryDelay); unset: a fixed 5 s.
  std::function<Duration()> store_retry_delay;
  // This DaemonSet's pods (FindAgentPods), by which finalizer mode judges which nodes still have
  // an agent; unset: a node's finalizers come off only when its Node is gone.
  std::optional<ResourceRef> agent_pods;
  // The agent pods alike to this agent's own on an older pod template (OlderAgentPods::Find);
  // unset when its own pod is not known. The singleton finalizer of a resource that left
  // singleton mode comes off only once there is none (finalizer_retirement.h).
  std::function<Result<std::vector<std::string>>()> pods_on_other_revisions;
  // "namespace/name" of the agent's own pod (downward API), which a rollout's drain never evicts.
  std::string self_pod;
  // Its tolerations, by which hooks' NoExecute taints are judged (own_tolerations.h); null when
  // the agent runs in no pod.
  std::shared_ptr<const OwnTolerations> own_tolerations;
};

class Agent {
 public:
  Agent(Config config, KubeClient& client, StateStore& store, ScheduleStore& schedule, ActionRunner& runner,
        Clock& clock, AgentOptions options = {});
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
  // The state store changed what it holds for the object `uid` ("": for any object), so the next
  // snapshot reads it again (ObservedStateStore tells every write). Thread-safe; lock-free but
  // for a set insert.
  void ObjectWritten(const std::string& uid);

  // An Event on this node's Node object about the agent itself, e.g. reason StateRecovered after
  // its state file was found damaged (KubeEventRecorder::Report). Thread-safe.
  void ReportNodeEvent(const std::string& action, const std::string& reason, bool warning, const std::string& note);

 private:
  // One thread per watch (the resources', and the node, pod and rollout Lease watches some modes add).
  void StartWatches(std::vector<std::thread>& threads, const CancelToken& stop);
  // Handles queued objects until `stop`; `hooks` stops the hooks it is running.
  void WorkerLoop(const CancelToken& stop, const CancelToken& hooks);
  // Applies retry requests (from the retry inbox, and those `nodehook state retry` left in the
  // store), and collects garbage.
  void HousekeepingLoop(const CancelToken& stop);
  // Writes what the retry inbox holds into the store; `*next_due` gets when more may be due.
  void ApplyRetryInbox(TimePoint* next_due);
  void EnqueueUid(const std::string& uid);
  // A damaged state file was replaced: what the first lists show is adopted (docs/state.md).
  ResourceTracker::FirstListFn AdoptionAfterRecovery();
  // nodehook_hook_runs_total at zero for every configured hook, nodehook_objects_cached.
  void RegisterMetrics();
  // The store's counts for StateMetrics, at most once a second (housekeeping thread).
  void RefreshStateMetrics(TimePoint* next_refresh);

  const Config config_;
  KubeClient& client_;
  StateStore& store_;
  Clock& clock_;
  WorkQueue queue_;
  KubeEventRecorder events_;
  BackoffRetryPolicy retry_policy_;
  OutcomeReporter reporter_;
  Reconciler reconciler_;
  ModeSet modes_;
  // Finalizers of resources this node no longer serves in that mode; its own thread.
  FinalizerRetirement retirement_;
  NodeBoundCheck node_bound_;  // are this node's writes confined to it? (docs/security.md)
  std::vector<std::unique_ptr<ResourcePipeline>> pipelines_;  // in config order
  Mutex housekeeping_mu_;
  std::condition_variable housekeeping_cv_;
  bool retry_offered_ GUARDED_BY(housekeeping_mu_) = false;
  RetryInbox retry_inbox_;
  StateMetrics state_metrics_;
  Metrics::CollectorId cache_collector_ = 0;  // reads pipelines_: removed in ~Agent
  std::shared_ptr<SettledLookup> settled_;    // reads pipelines_: detached in ~Agent
  ObjectViewsPublisher object_views_;
  // Periodic checks and node snapshots, on threads of their own.
  std::unique_ptr<PeriodicHooks> periodic_;
  // The resources' NodeConditions on this Node (node_outputs.h); null when none keeps one.
  std::unique_ptr<NodeOutputsWriter> node_outputs_;
  // This node's ready records, and its candidacy as their writer (readiness.h).
  std::unique_ptr<Readiness> readiness_;
  RequeueTriggers requeue_;
};

}  // namespace nodehook
