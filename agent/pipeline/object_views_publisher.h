// ObjectViewsPublisher: the snapshot of this node's state that GET /v1/objects serves.
//
// The HTTP thread must never wait for SQLite (a busy or slow store must not delay /healthz), so
// the agent's housekeeping thread reads the store here and publishes an immutable snapshot;
// the server thread only takes a shared pointer to it. A refresh reads only what changed: the
// objects announced by uid since the last one (MarkChanged(uid): after each reconcile), each
// with a read of that object, the rest of the snapshot kept (its views are shared, so a refresh
// costs a read per changed object and a copy of N pointers, not a read of N objects). The whole
// store is read (the cheap read: no diffbase bodies, CollectObjectViews(store, false)) first,
// after MarkAllChanged() (applied retry requests, garbage collection), and when the snapshot is
// older than `max_age` and the store's stamp moved since (to see what `nodehook state
// retry/forget` changed from outside the process; an agent at rest reads nothing). Refreshes
// are at least `min_interval` apart; a whole read holds the store's lock (workers' commits
// wait) and costs about 9 ms of CPU per 1,000 objects (docs/benchmarks.md), so the interval also
// stretches to `1 / max_busy_share` times the last read's duration. On a small
// node answers are at most about one housekeeping tick (2 s) behind the store; each answer says
// how old its snapshot is. Each snapshot carries `settled_version` (the resources' caches),
// which the endpoint asks for each object it serves: the settled version as of the answer.
// Thread-safety: MarkChanged(), MarkAllChanged() and Latest() from any thread; RefreshIfDue()
// from one thread.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"
#include "agent/http/objects_endpoint.h"
#include "storage/state_store.h"

namespace nodehook {

struct ObjectViewsPublisherOptions {
  Duration min_interval = std::chrono::seconds(1);
  Duration max_age = std::chrono::seconds(30);
  double max_busy_share = 0.05;  // of the time spent reading the store for snapshots
  // Each object's settled resourceVersion (ObjectViewsSnapshot::settled_version); none: "".
  std::function<std::string(std::string_view resource, const std::string& uid)> settled_version{};
  // Whether the node-bound rules confine this agent (ObjectViewsSnapshot::node_bound); none: "".
  std::function<std::string()> node_bound{};
};

class ObjectViewsPublisher {
 public:
  ObjectViewsPublisher(StateStore& store, Clock& clock, ObjectViewsPublisherOptions options);

  // The store changed for the object `uid`: the next refresh that is due reads it again.
  void MarkChanged(const std::string& uid) EXCLUDES(dirty_mu_);
  // The store changed in ways no uid names: the next refresh that is due reads all of it.
  // Lock-free.
  void MarkAllChanged() { all_changed_.store(true, std::memory_order_relaxed); }

  // Reads the store and publishes a new snapshot when due. A failed read keeps the previous
  // snapshot (logged) and is tried again at the next call.
  void RefreshIfDue();

  // The latest snapshot; kUnavailable before the first one.
  Result<ObjectViewsPtr> Latest() const;

 private:
  // The views of the whole store; or those of `previous` with the objects `changed` names read
  // again (and dropped when the store no longer knows them).
  Result<std::vector<SharedSnapshotObject>> ReadAll();
  Result<std::vector<SharedSnapshotObject>> ReadChanged(const ObjectViewsSnapshot& previous,
                                                    const std::set<std::string>& changed);
  // As a snapshot serves it: no bodies, the settled resourceVersion.
  static SharedSnapshotObject Served(ObjectView view);

  StateStore& store_;
  Clock& clock_;
  const ObjectViewsPublisherOptions options_;
  std::atomic<bool> all_changed_{true};
  Mutex dirty_mu_;
  std::set<std::string> dirty_ GUARDED_BY(dirty_mu_);  // uids announced since the last refresh
  TimePoint last_full_read_{};  // only RefreshIfDue's thread
  TimePoint last_refresh_{};    // only RefreshIfDue's thread
  Duration interval_{};         // only RefreshIfDue's thread: min_interval, or more after a slow read
  std::optional<StoreStamp> full_read_stamp_;  // only RefreshIfDue's thread: the store's, at the last whole read
  mutable Mutex mu_;
  ObjectViewsPtr latest_ GUARDED_BY(mu_);
};

}  // namespace nodehook
