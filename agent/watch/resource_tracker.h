// ResourceTracker: the WatchSink of one watched resource. Keeps its ObjectCache current and
// queues every object that needs a look. On each (re)list it also turns objects the state store
// remembers but the cluster no longer has into tombstones: that is how deletions made while the
// agent was down, or DELETED events lost in a broken stream, still reach the delete hook.
// An object that cannot be taken (BadObject: too deep, too big, unreadable) is quarantined on its
// own: skipped with one log line, a metric and a Warning Event, its last handled state kept, and
// never taken for deleted while it is listed. Its DELETED event still runs the delete hook (with
// the last handled state), and once it arrives good again it is handled as usual.
// When the resource has an "event" hook, every observed change is also stored as an event
// (ADDED, MODIFIED, DELETED; a relist reports what changed since the last view) before the
// object is queued, so the event hook runs for each, in order, even after a restart.
// Called from the resource's watcher thread; the cache and queue it feeds are thread-safe.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/events/event_recorder.h"
#include "agent/kube/client/kube_types.h"
#include "agent/watch/object_cache.h"
#include "agent/watch/watcher.h"
#include "agent/queue/work_queue.h"
#include "storage/state_store.h"

namespace nodehook {

class ResourceTracker final : public WatchSink {
 public:
  using FirstListFn = std::function<void(const std::vector<ObjectPtr>& items)>;

  // `resource`: the watched entry; only the stored rows it holds (ResourceScope) are its own.
  // `facts`: what the cache reads from each object version (object_facts.h).
  ResourceTracker(size_t index, const ResourceRef& resource, WorkQueue& queue, StateStore& store, Clock& clock,
                  FirstListFn on_first_list = nullptr, bool record_events = false, FactsSpec facts = {})
      : index_(index),
        record_events_(record_events),
        scope_(resource),
        queue_(queue),
        store_(store),
        clock_(clock),
        on_first_list_(std::move(on_first_list)),
        cache_(std::move(facts)) {}

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;
  void OnQuarantined(const BadObject& bad, WatchEventType type) override;

  // Where quarantined objects are reported: a Warning Event on each (not owned; may be null) and
  // nodehook_objects_quarantined_total{resource,reason} / nodehook_objects_quarantined{resource}.
  // Call before the watcher starts.
  void SetQuarantineReporting(ResourceRef resource, EventRecorder* events, Metrics& metrics = DefaultMetrics());

  ObjectCache& cache() { return cache_; }
  const ObjectCache& cache() const { return cache_; }

  // Called on the watcher thread after every list and after each change it queues (the node
  // snapshot hook's trigger). Set before the watcher starts.
  void SetOnChange(std::function<void()> on_change) { on_change_ = std::move(on_change); }

 private:
  void Enqueue(const std::string& uid) {
    queue_.Add(QueueKey{index_, uid});
    if (on_change_) on_change_();
  }
  // Records when the object was seen gone, so garbage collection can purge what is left of it.
  void MarkGone(const std::string& uid);

  // Stores one observed change for the event hook.
  void RecordEvent(const char* type, const KubeObject& object);
  void RecordEvent(const char* type, const std::string& uid);

  // Logs, counts and posts one newly quarantined object; `next` says what happens to it.
  void ReportQuarantined(const BadObject& bad, const char* event_type, const std::string& next);
  // Drops a uid from the quarantine (deleted, or good again); true when it was there.
  bool Release(const std::string& uid);

  const size_t index_;
  const bool record_events_;
  bool listed_once_ = false;
  const ResourceScope scope_;  // its id names the resource in logs and the store
  WorkQueue& queue_;
  StateStore& store_;
  Clock& clock_;
  FirstListFn on_first_list_;  // called once, before the first list's objects are queued
  std::function<void()> on_change_;
  ObjectCache cache_;
  std::set<std::string> quarantined_;  // uids of objects skipped as bad, while they stay bad
  ResourceRef resource_;
  EventRecorder* events_ = nullptr;
  Metrics* metrics_ = &DefaultMetrics();
  Gauge* quarantined_gauge_ = nullptr;
};

}  // namespace nodehook
