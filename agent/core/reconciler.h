// Reconciler: decides what one object needs on this node and does it.
//   object gone or being deleted, and known here -> delete
//   nothing stored for it                          -> create
//   essence differs from the stored diffbase       -> update
//   unchanged, first sight since the agent started -> resume (when a resume hook exists)
// A hook that finishes stores the new diffbase. Every other outcome (hook_outcome.h) is recorded
// as durable progress (retries, first start, next attempt, outcome, message) and the object is
// looked at again when it is due, after a restart too. A handler that exhausts its retry limits
// is marked permanently failed and waits for the object to change or an explicit retry (which
// makes the store mark it "retry_requested": it runs once more). Failures, recoveries and
// permanent failures are reported to the EventRecorder. A hook stopped at agent shutdown is
// recorded as "interrupted": due again at once after the restart, no retry counted.
// Thread-safe: workers call Reconcile() concurrently, never for the same object at once
// (the WorkQueue guarantees that).
#pragma once

#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "agent/actions/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/core/event_recorder.h"
#include "agent/core/hook_metrics.h"
#include "agent/core/hook_outcome.h"
#include "agent/core/node_directory.h"
#include "agent/core/node_targeting.h"
#include "agent/core/object_cache.h"
#include "storage/state_store.h"

namespace nodehook {

struct ReconcilerOptions {
  std::string node_name;
  std::string work_dir;  // scratch space for hook input files
  Duration retry_base{1000};
  Duration retry_max{300'000};
  double retry_factor = 2.0;
  double retry_jitter = 0.0;          // each delay is scaled by a random factor in [1 - j, 1 + j]
  int retry_limit = 0;                // failures before giving up; 0 = never (a hook may override)
  Duration retry_total{0};            // give up this long after the first attempt; 0 = never
  Duration in_progress_delay{10'000};  // when an "in progress" hook asks for no delay
  uint64_t seed = 0;                  // jitter seed; 0 = random
  // How soon to try again when the state store itself failed.
  Duration store_retry{5000};
  Metrics* metrics = nullptr;  // nodehook_hook_* (HookMetrics); null = not recorded
};

class Reconciler {
 public:
  Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, ReconcilerOptions options);

  // Handles the object `uid` of `resource` as currently cached. Returns when to look at it
  // again; std::nullopt means "not until it changes".
  std::optional<Duration> Reconcile(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                    const CancelToken& stop);

  // Optional collaborators, set before the first Reconcile(); both must outlive the reconciler.
  void SetEventRecorder(EventRecorder* events) { events_ = events; }
  void SetNodeTargeting(const NodeTargeting* targeting) { targeting_ = targeting; }
  // Needed by resources in finalizer mode: patches finalizers, and finds departed nodes.
  void SetFinalizerSupport(KubeClient* client, NodeDirectory* nodes) {
    client_ = client;
    nodes_ = nodes;
  }

  // After a damaged state file was replaced by an empty one: these objects (the first list's) get
  // their diffbase stored without running create, since this node most likely handled them before.
  // When the last one is adopted, the store's "adopt existing" mark is cleared.
  // `lists` first lists (one per watched resource) will each call AdoptOnce().
  void ExpectAdoption(int lists);
  void AdoptOnce(const std::vector<std::string>& uids);

  // The delay before retry number `retries` (1-based): base * factor^(retries-1), capped,
  // then jittered.
  Duration RetryDelay(int retries);

 private:
  struct Plan;
  // Finalizer mode: adds this node's finalizer before the first hook, removes it after the
  // delete hook finished, and removes finalizers of nodes that left the cluster. False when a
  // patch failed (logged); the caller retries soon.
  bool EnsureOwnFinalizer(const WatchedResource& resource, const KubeObject& object);
  bool RemoveOwnFinalizer(const WatchedResource& resource, const KubeObject& object);
  void RemoveDepartedFinalizers(const WatchedResource& resource, const KubeObject& object);
  Status PatchFinalizers(const WatchedResource& resource, const ObjectMeta& meta, const std::string& patch);

  // The level-triggered part: create, update, delete, resume.
  std::optional<Duration> ReconcileLevel(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                         const CancelToken& stop);
  std::optional<Plan> Decide(const WatchedResource& resource, const CachedObject& entry,
                             const std::optional<ObjectRecord>& record, const std::vector<HandlerRecord>& progress);
  std::optional<Duration> Execute(const WatchedResource& resource, ObjectCache& cache, const Plan& plan,
                                  const CancelToken& stop);
  // The object `handled` is stored as the diffbase: its bytes may leave the cache (object_cache.h).
  void DropBytes(const WatchedResource& resource, ObjectCache& cache, const ObjectMeta& handled);
  // `ran_hook`: a hook ran (and may be reported), rather than nothing to run or an adoption.
  // `earlier_failures`: failed attempts before this success (> 0 reports a recovery).
  std::optional<Duration> Finish(const WatchedResource& resource, const Plan& plan, ObjectCache& cache,
                                 const std::string& message, bool ran_hook, int earlier_failures = 0);
  // The hook was stopped because the agent is shutting down: recorded as due again, no retry counted.
  std::optional<Duration> Interrupted(const Plan& plan, HandlerRecord progress);
  // Runs the "event" hook for the object's stored events, oldest first; stops at the first that
  // is not due or does not succeed, so events are handled in order.
  std::optional<Duration> HandleEvents(const WatchedResource& resource, const HookSpec& hook, const std::string& uid,
                                       const CancelToken& stop);
  // Whether a failure after `retries` retries since `first_start` exhausted the hook's limits.
  bool OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const;
  std::optional<Duration> Postpone(const WatchedResource& resource, const Plan& plan, const HookSpec& hook,
                                   const HookOutcome& outcome, HandlerRecord progress);
  bool FirstSight(const std::string& uid);
  void MarkSeen(const std::string& uid);
  void Unsee(const std::string& uid);

  StateStore& store_;
  ActionRunner& runner_;
  EventRecorder* events_ = nullptr;
  KubeClient* client_ = nullptr;
  NodeDirectory* nodes_ = nullptr;
  const NodeTargeting* targeting_ = nullptr;
  Clock& clock_;
  const ReconcilerOptions options_;
  HookMetrics hook_metrics_;

  std::mutex mu_;
  std::set<std::string> seen_;  // uids handled or found unchanged since start: no resume for them
  std::mt19937_64 rng_;         // retry jitter; guarded by mu_
  std::set<std::string> adopt_;  // guarded by mu_
  int adopt_lists_pending_ = 0;  // guarded by mu_
  bool TakeAdoption(const std::string& uid);
};

}  // namespace nodehook
