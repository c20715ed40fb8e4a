// Reconciler: decides what one object needs on this node and does it.
//   object gone or being deleted, and known here -> delete
//   nothing stored for it                          -> create
//   essence differs from the stored diffbase       -> update
//   unchanged, first sight since the agent started -> resume (when a resume hook exists)
// A hook that exits 0 stores the new diffbase; any other outcome is recorded as durable retry
// state (count, next attempt, message) and the object is looked at again when it is due.
// Thread-safe: workers call Reconcile() concurrently, never for the same object at once
// (the WorkQueue guarantees that).
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "agent/actions/action_runner.h"
#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/core/object_cache.h"
#include "storage/state_store.h"

namespace nodehook {

struct ReconcilerOptions {
  std::string node_name;
  std::string work_dir;  // scratch space for hook input files
  Duration retry_base{1000};
  Duration retry_max{300'000};
  // How soon to try again when the state store itself failed.
  Duration store_retry{5000};
};

class Reconciler {
 public:
  Reconciler(StateStore& store, ActionRunner& runner, Clock& clock, ReconcilerOptions options);

  // Handles the object `uid` of `resource` as currently cached. Returns when to look at it
  // again; std::nullopt means "not until it changes".
  std::optional<Duration> Reconcile(const WatchedResource& resource, ObjectCache& cache, const std::string& uid,
                                    const CancelToken& stop);

  // The delay before retry number `retries` (1-based): base * 2^(retries-1), capped.
  Duration RetryDelay(int retries) const;

 private:
  struct Plan;
  std::optional<Plan> Decide(const WatchedResource& resource, const CachedObject& entry,
                             const std::optional<ObjectRecord>& record, bool has_progress);
  std::optional<Duration> Execute(const WatchedResource& resource, ObjectCache& cache, const Plan& plan,
                                  const CancelToken& stop);
  bool FirstSight(const std::string& uid);
  void MarkSeen(const std::string& uid);
  void Unsee(const std::string& uid);

  StateStore& store_;
  ActionRunner& runner_;
  Clock& clock_;
  const ReconcilerOptions options_;

  std::mutex mu_;
  std::set<std::string> seen_;  // uids handled or found unchanged since start: no resume for them
};

}  // namespace nodehook
