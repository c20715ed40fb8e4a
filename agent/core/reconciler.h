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

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "agent/actions/action_runner.h"
#include "agent/actions/scratch_pool.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/core/event_recorder.h"
#include "agent/core/finalizer_keeper.h"
#include "agent/core/hook_metrics.h"
#include "agent/core/hook_outcome.h"
#include "agent/core/leadership.h"
#include "agent/core/node_targeting.h"
#include "agent/core/object_cache.h"
#include "agent/core/retry_policy.h"
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
  // Singleton resources: how long an agent that does not lead keeps a deleted object that some
  // leader handled, so that if the leader fell before its delete hook ran, the next one runs it.
  Duration singleton_delete_window{0};
};

class Reconciler final : public RetryPolicy {
 public:
  Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, ReconcilerOptions options);

  // Handles the object `uid` of `resource` as currently cached. Returns when to look at it
  // again; std::nullopt means "not until it changes".
  std::optional<Duration> Reconcile(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                    const CancelToken& stop);

  // Optional collaborators, set before the first Reconcile(); both must outlive the reconciler.
  void SetEventRecorder(EventRecorder* events) { events_ = events; }
  void SetNodeTargeting(const NodeTargeting* targeting) { targeting_ = targeting; }
  // Needed by resources in finalizer mode: every finalizer edit goes through it.
  void SetFinalizerKeeper(FinalizerKeeper* finalizers) { finalizers_ = finalizers; }
  // Needed by cluster-singleton resources: writes their handled-state annotation.
  void SetKubeClient(KubeClient* client) { client_ = client; }
  // Asked how soon to try again after a state store write failed; unset = options.store_retry.
  void SetStoreRetryDelay(std::function<Duration()> delay) { store_retry_delay_ = std::move(delay); }

  // Needed by cluster-singleton resources: their hooks run only while `leadership` grants a term,
  // and stop when it ends. Without it they never run. Must outlive the reconciler.
  // `fence` is put in front of each singleton hook's argv (e.g. `nodehook fence FILE 2000 --`,
  // fence_command.h), so the hook also stops when the agent cannot stop it; {} = none.
  void SetLeadership(const Leadership* leadership, std::vector<std::string> fence = {}) {
    leadership_ = leadership;
    singleton_fence_ = std::move(fence);
  }

  // After a damaged state file was replaced by an empty one: these objects (the first list's) get
  // their diffbase stored without running create, since this node most likely handled them before.
  // When the last one is adopted, the store's "adopt existing" mark is cleared.
  // `lists` first lists (one per watched resource) will each call AdoptOnce().
  void ExpectAdoption(int lists);
  void AdoptOnce(const std::vector<std::string>& uids);

  // The delay before retry number `retries` (1-based): base * factor^(retries-1), capped,
  // then jittered.
  Duration RetryDelay(int retries) override;
  bool OutOfRetries(const HookSpec& hook, int retries, TimePoint first_start) const override;
  Duration InProgressDelay() const override { return options_.in_progress_delay; }

 private:
  struct Plan;
  // Finalizer mode: the object's departed nodes' finalizers come off (when it is being deleted);
  // returns when to look again if some could not be checked.
  std::optional<Duration> SweepDepartedFinalizers(const WatchedResource& resource, const CachedObject& entry);
  // Finalizer mode, the delete hook succeeded: stores that (so neither a restart nor a failed
  // removal runs it again) before this node's finalizer comes off; then finishes.
  std::optional<Duration> FinishDeleteWithFinalizer(const WatchedResource& resource, const Plan& plan,
                                                    ObjectCache& cache, HandlerRecord progress, const std::string& message,
                                                    bool ran_hook, int earlier_failures);

  // The level-triggered part: create, update, delete, resume.
  std::optional<Duration> ReconcileLevel(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                         const CancelToken& stop);
  std::optional<Plan> Decide(const WatchedResource& resource, const CachedObject& entry,
                             const std::optional<ObjectRecord>& record, const std::vector<HandlerRecord>& progress);
  // `previous`: the stored progress of plan.reason's handler, if any.
  std::optional<Duration> Execute(const WatchedResource& resource, ObjectCache& cache, const Plan& plan,
                                  const std::optional<HandlerRecord>& previous, const CancelToken& stop);
  // The object `handled` is stored as the diffbase: its bytes may leave the cache (object_cache.h).
  void DropBytes(const WatchedResource& resource, ObjectCache& cache, const ObjectMeta& handled);
  // `ran_hook`: a hook ran (and may be reported), rather than nothing to run or an adoption.
  // `earlier_failures`: failed attempts before this success (> 0 reports a recovery).
  std::optional<Duration> Finish(const WatchedResource& resource, const Plan& plan, ObjectCache& cache,
                                 const std::string& message, bool ran_hook, int earlier_failures = 0);
  // "hook succeeded" and the Events that go with it.
  void ReportSuccess(const WatchedResource& resource, const Plan& plan, const std::string& message,
                     int earlier_failures, const std::string& next);
  // The hook was stopped because the agent is shutting down (or, for a singleton resource, lost
  // its leadership): recorded as due again, no retry counted.
  std::optional<Duration> Interrupted(const Plan& plan, HandlerRecord progress, bool singleton);
  // Singleton resources: whether a hook may start now (logged when not).
  bool MayStartSingleton(const WatchedResource& resource, const ObjectMeta& meta) const;
  // Singleton resources: writes the handled state's digest onto the object for the next leader.
  void RecordSingletonHandled(const WatchedResource& resource, const Plan& plan);
  // Runs the "event" hook for the object's stored events, oldest first; stops at the first that
  // is not due or does not succeed, so events are handled in order.
  std::optional<Duration> HandleEvents(const WatchedResource& resource, const HookSpec& hook, const std::string& uid,
                                       const CancelToken& stop);
  std::optional<Duration> Postpone(const WatchedResource& resource, const Plan& plan, const HookSpec& hook,
                                   const HookOutcome& outcome, HandlerRecord progress);
  Duration StoreRetry() const { return store_retry_delay_ ? store_retry_delay_() : options_.store_retry; }
  bool FirstSight(const std::string& uid);
  void MarkSeen(const std::string& uid);
  void Unsee(const std::string& uid);

  StateStore& store_;
  ActionRunner& runner_;
  EventRecorder* events_ = nullptr;
  FinalizerKeeper* finalizers_ = nullptr;
  KubeClient* client_ = nullptr;
  const NodeTargeting* targeting_ = nullptr;
  const Leadership* leadership_ = nullptr;
  std::vector<std::string> singleton_fence_;
  std::function<Duration()> store_retry_delay_;
  Clock& clock_;
  const ReconcilerOptions options_;
  HookMetrics hook_metrics_;
  ScratchPool scratch_;  // hook input directories under options_.work_dir, reused across runs

  std::mutex mu_;
  std::set<std::string> seen_;  // uids handled or found unchanged since start: no resume for them
  std::mt19937_64 rng_;         // retry jitter; guarded by mu_
  std::set<std::string> adopt_;  // guarded by mu_
  std::map<std::string, TimePoint> singleton_gone_;  // guarded by mu_: when a non-leader first saw it gone
  // Not leading: keeps a deleted singleton object within the window; returns when to look again,
  // or nullopt once it is forgotten.
  std::optional<Duration> KeepGoneSingleton(ObjectCache& cache, const std::string& uid);
  int adopt_lists_pending_ = 0;  // guarded by mu_
  bool TakeAdoption(const std::string& uid);
};

}  // namespace nodehook
