// ObjectViewsPublisher: the snapshot of this node's state that GET /v1/objects serves.
//
// The HTTP thread must never wait for SQLite (a busy or slow store must not delay /healthz), so
// the agent's housekeeping thread reads the store here and publishes an immutable snapshot;
// the server thread only takes a shared pointer to it. The read is the cheap one (no diffbase
// bodies, CollectObjectViews(store, false)), and happens only when something changed since the
// last one (MarkChanged: after each reconcile, applied retry request or garbage collection) and
// at least `min_interval` after it, or when the snapshot is older than `max_age` (to see what
// `nodehook state retry/forget` changed from outside the process). A read holds the store's lock
// (workers' commits wait) and costs about 9 ms of CPU per 1,000 objects (docs/benchmarks.md), so
// the interval also stretches to `1 / max_busy_share` times the last read's duration: on a
// large, busy node the snapshot ages a little instead of the store being read most of the time.
// On a small node answers are at most about one housekeeping tick (2 s) behind the store; each
// answer says how old its snapshot is. Each object also carries its settled resourceVersion,
// asked of `settled_version` (the reconciler's memory) when the snapshot is taken.
// Thread-safety: MarkChanged() and Latest() from any thread; RefreshIfDue() from one thread.
#pragma once

#include <atomic>
#include <functional>

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
  // Each object's settled resourceVersion (ObjectView::settled_resource_version); none: "".
  std::function<std::string(const std::string& uid)> settled_version{};
  // Whether the node-bound rules confine this agent (ObjectViewsSnapshot::node_bound); none: "".
  std::function<std::string()> node_bound{};
};

class ObjectViewsPublisher {
 public:
  ObjectViewsPublisher(StateStore& store, Clock& clock, ObjectViewsPublisherOptions options);

  // The store changed; the next RefreshIfDue() that is allowed to reads it again. Lock-free.
  void MarkChanged() { changed_.store(true, std::memory_order_relaxed); }

  // Reads the store and publishes a new snapshot when due. A failed read keeps the previous
  // snapshot (logged) and is tried again at the next call.
  void RefreshIfDue();

  // The latest snapshot; kUnavailable before the first one.
  Result<ObjectViewsPtr> Latest() const;

 private:
  StateStore& store_;
  Clock& clock_;
  const ObjectViewsPublisherOptions options_;
  std::atomic<bool> changed_{true};
  bool read_once_ = false;    // only RefreshIfDue's thread
  TimePoint last_refresh_{};  // only RefreshIfDue's thread
  Duration interval_{};       // only RefreshIfDue's thread: min_interval, or more after a slow read
  mutable Mutex mu_;
  ObjectViewsPtr latest_ GUARDED_BY(mu_);
};

}  // namespace nodehook
