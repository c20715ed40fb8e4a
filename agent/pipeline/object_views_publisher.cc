#include "agent/pipeline/object_views_publisher.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"

namespace nodehook {

ObjectViewsPublisher::ObjectViewsPublisher(StateStore& store, Clock& clock, ObjectViewsPublisherOptions options)
    : store_(store), clock_(clock), options_(std::move(options)), interval_(options_.min_interval) {}

void ObjectViewsPublisher::RefreshIfDue() {
  TimePoint now = clock_.Now();
  bool changed = changed_.load(std::memory_order_relaxed) && now - last_refresh_ >= interval_;
  if (read_once_ && !changed && now - last_refresh_ < options_.max_age) return;
  // Cleared before reading, so a change made during the read is seen by the next refresh.
  changed_.store(false, std::memory_order_relaxed);
  last_refresh_ = now;
  read_once_ = true;
  auto views = CollectObjectViews(store_, /*diffbase_bodies=*/false);
  auto took = std::chrono::duration_cast<Duration>((clock_.Now() - now) / options_.max_busy_share);
  interval_ = std::max(options_.min_interval, took);
  if (!views.ok()) {
    changed_.store(true, std::memory_order_relaxed);
    Log(LogLevel::kWarn, "object view snapshot not refreshed",
        {{"node", store_.node_name()}, {"error", views.status().ToString()},
         {"next", "serve the previous snapshot on /v1/objects; read again at the next housekeeping tick"}});
    return;
  }
  auto snapshot = std::make_shared<ObjectViewsSnapshot>();
  snapshot->node = store_.node_name();
  if (options_.node_bound) snapshot->node_bound = options_.node_bound();
  snapshot->taken_at = now;
  snapshot->objects = std::move(views).value();
  for (ObjectView& o : snapshot->objects) {
    for (HandlerRecord& h : o.handlers) h.last_object.clear();  // never served; not kept in memory
    // Only when it was handled is served: the view already holds the identity, once.
    if (o.diffbase) o.diffbase = ObjectRecord{"", "", "", "", "", "", o.diffbase->handled_at_ms};
    if (options_.settled_version) o.settled_resource_version = options_.settled_version(o.uid);
  }
  MutexLock lock(&mu_);
  latest_ = std::move(snapshot);
}

Result<ObjectViewsPtr> ObjectViewsPublisher::Latest() const {
  MutexLock lock(&mu_);
  if (!latest_) return UnavailableError("no snapshot of this node's state yet; the agent is starting");
  return latest_;
}

}  // namespace nodehook
