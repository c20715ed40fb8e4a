#include "agent/pipeline/object_views_publisher.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "agent/base/interned.h"
#include "agent/base/log.h"

namespace nodehook {
namespace {

// The snapshot's order (CollectObjectViews' ORDER BY: byte-wise, as std::string compares).
bool Before(const SharedSnapshotObject& a, const SharedSnapshotObject& b) {
  const std::string_view a_resource = a->resource, a_namespace = a->namespace_name(), a_name = a->name();
  const std::string_view b_resource = b->resource, b_namespace = b->namespace_name(), b_name = b->name();
  return std::tie(a_resource, a_namespace, a_name, a->uid) < std::tie(b_resource, b_namespace, b_name, b->uid);
}

}  // namespace

ObjectViewsPublisher::ObjectViewsPublisher(StateStore& store, Clock& clock, ObjectViewsPublisherOptions options)
    : store_(store), clock_(clock), options_(std::move(options)), interval_(options_.min_interval) {}

void ObjectViewsPublisher::MarkChanged(const std::string& uid) {
  MutexLock lock(&dirty_mu_);
  dirty_.insert(uid);
}

SharedSnapshotObject ObjectViewsPublisher::Served(ObjectView view) {
  // Read without bodies, a view has no diffbase and no node steps; SnapshotHandler keeps neither
  // the handlers' last_object nor their copies of the identity.
  return std::make_shared<const SnapshotObject>(SnapshotObject{
      CompactUid(view.uid), InternedText(view.resource), SnapshotObject::KeyOf(view.namespace_name, view.name),
      view.handled_at_ms.value_or(-1), SnapshotHandlers(std::move(view.handlers))});
}

Result<std::vector<SharedSnapshotObject>> ObjectViewsPublisher::ReadAll() {
  auto views = CollectObjectViews(store_, /*diffbase_bodies=*/false);
  if (!views.ok()) return views.status();
  std::vector<SharedSnapshotObject> out;
  out.reserve(views->size());
  for (ObjectView& view : *views) out.push_back(Served(std::move(view)));
  return out;
}

Result<std::vector<SharedSnapshotObject>> ObjectViewsPublisher::ReadChanged(const ObjectViewsSnapshot& previous,
                                                                        const std::set<std::string>& changed) {
  std::vector<SharedSnapshotObject> fresh;
  std::set<CompactUid> replaced;  // read again, or gone: their previous views go
  for (const std::string& uid : changed) {
    Result<ObjectView> view = CollectObjectView(store_, uid, /*diffbase_bodies=*/false);
    if (view.ok()) {
      fresh.push_back(Served(std::move(view).value()));
      replaced.insert(CompactUid(uid));
    } else if (view.status().code() == StatusCode::kNotFound) {  // forgotten
      replaced.insert(CompactUid(uid));
    } else if (view.status().code() != StatusCode::kCorrupt) {
      return view.status();
    }
    // A record this store cannot read keeps its previous view; the whole read skips the row
    // (the reconciler quarantines the object).
  }
  std::sort(fresh.begin(), fresh.end(), Before);
  std::vector<SharedSnapshotObject> kept;
  kept.reserve(previous.objects.size());
  for (const SharedSnapshotObject& view : previous.objects) {
    if (!replaced.count(view->uid)) kept.push_back(view);
  }
  std::vector<SharedSnapshotObject> out;
  out.reserve(kept.size() + fresh.size());
  std::merge(kept.begin(), kept.end(), fresh.begin(), fresh.end(), std::back_inserter(out), Before);
  return out;
}

void ObjectViewsPublisher::RefreshIfDue() {
  const TimePoint now = clock_.Now();
  ObjectViewsPtr previous;
  {
    MutexLock lock(&mu_);
    previous = latest_;
  }
  bool announced = all_changed_.load(std::memory_order_relaxed);
  if (!announced) {
    MutexLock lock(&dirty_mu_);
    announced = !dirty_.empty();
  }
  // Read whole again after max_age only when the store changed since the last whole read: at
  // rest nothing did, and a whole read of 10,000 objects costs about 90 ms of CPU.
  std::optional<StoreStamp> stamp;
  bool too_old = !previous;
  if (!too_old && now - last_full_read_ >= options_.max_age) {
    stamp = store_.Stamp();
    too_old = !stamp || !full_read_stamp_ || *stamp != *full_read_stamp_;
  }
  if (!too_old && !(announced && now - last_refresh_ >= interval_)) return;
  // Taken before reading, so a change made during the read is seen by the next refresh.
  const bool full = all_changed_.exchange(false, std::memory_order_relaxed) || too_old;
  if (full && !stamp) stamp = store_.Stamp();
  std::set<std::string> changed;
  {
    MutexLock lock(&dirty_mu_);
    changed.swap(dirty_);
  }
  last_refresh_ = now;
  auto views = full ? ReadAll() : ReadChanged(*previous, changed);
  auto took = std::chrono::duration_cast<Duration>((clock_.Now() - now) / options_.max_busy_share);
  interval_ = std::max(options_.min_interval, took);
  if (!views.ok()) {
    if (full) MarkAllChanged();
    MutexLock lock(&dirty_mu_);
    dirty_.insert(changed.begin(), changed.end());
    Log(LogLevel::kWarn, "object view snapshot not refreshed",
        {{"node", store_.node_name()}, {"error", views.status().ToString()},
         {"next", "serve the previous snapshot on /v1/objects; read again at the next housekeeping tick"}});
    return;
  }
  if (full) {
    last_full_read_ = now;
    full_read_stamp_ = stamp;
  }
  auto snapshot = std::make_shared<ObjectViewsSnapshot>();
  snapshot->node = store_.node_name();
  if (options_.node_bound) snapshot->node_bound = options_.node_bound();
  snapshot->taken_at = now;
  snapshot->objects = std::move(views).value();
  snapshot->settled_version = options_.settled_version;
  MutexLock lock(&mu_);
  latest_ = std::move(snapshot);
}

Result<ObjectViewsPtr> ObjectViewsPublisher::Latest() const {
  MutexLock lock(&mu_);
  if (!latest_) return UnavailableError("no snapshot of this node's state yet; the agent is starting");
  return latest_;
}

}  // namespace nodehook
