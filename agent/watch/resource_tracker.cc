#include "agent/watch/resource_tracker.h"

#include <set>

#include "agent/base/log.h"

namespace nodehook {

void ResourceTracker::MarkGone(const std::string& uid) {
  Status marked = store_.MarkGone(uid, ToMillis(clock_.Now()));
  if (!marked.ok()) {
    Log(LogLevel::kWarn, "state store write failed",
        {{"resource", scope_.id()}, {"uid", uid}, {"error", marked.ToString()},
         {"next", "garbage collection may keep this object's rows longer"}});
  }
}

void ResourceTracker::RecordEvent(const char* type, const KubeObject& object) {
  if (!record_events_) return;
  EventRecord e;
  e.uid = object.meta.uid;
  e.resource = scope_.id();
  e.namespace_name = object.meta.namespace_name;
  e.name = object.meta.name;
  e.type = type;
  e.object = object.json;
  e.observed_at_ms = ToMillis(clock_.Now());
  Status stored = store_.AppendEvent(e);
  if (!stored.ok()) {
    Log(LogLevel::kError, "state store write failed",
        {{"object", object.meta.Key()}, {"uid", e.uid}, {"handler", "event"}, {"event", type},
         {"error", stored.ToString()}, {"next", "this event is lost; the level-triggered handlers still run"}});
  }
}

// A change known only by uid: a tombstone from the store. Its last handled state is the object.
void ResourceTracker::RecordEvent(const char* type, const std::string& uid) {
  if (!record_events_) return;
  auto cached = cache_.Get(uid);
  if (cached && cached->object) return RecordEvent(type, *cached->object);
  auto record = store_.GetObject(uid);
  if (!record.ok() || !*record) return;
  KubeObject last;
  last.meta = {uid, (*record)->namespace_name, (*record)->name, "", false};
  last.json = (*record)->last_object;
  RecordEvent(type, last);
}

void ResourceTracker::SetQuarantineReporting(ResourceRef resource, EventRecorder* events, Metrics& metrics) {
  resource_ = std::move(resource);
  events_ = events;
  metrics_ = &metrics;
  quarantined_gauge_ = &metrics.GetGauge("objects_quarantined", "Objects currently skipped as bad (too deep, too big, unreadable)",
                                         {{"resource", scope_.id()}});
}

void ResourceTracker::ReportQuarantined(const BadObject& bad, const char* event_type, const std::string& next) {
  metrics_->GetCounter("objects_quarantined_total", "Objects skipped as bad (too deep, too big, unreadable), by reason",
                       {{"resource", scope_.id()}, {"reason", bad.reason}})
      .Increment();
  if (quarantined_gauge_) quarantined_gauge_->Set(static_cast<double>(quarantined_.size()));
  Log(LogLevel::kWarn, "object quarantined",
      {{"object", bad.meta.Key()}, {"uid", bad.meta.uid}, {"resource", scope_.id()}, {"event", event_type},
       {"reason", bad.reason}, {"error", bad.message}, {"next", next}});
  if (events_ && !bad.meta.uid.empty() && !bad.meta.name.empty()) {
    events_->Quarantined(resource_, bad.meta, bad.message + "; nodehook skips this object until it changes");
  }
}

bool ResourceTracker::Release(const std::string& uid) {
  if (!quarantined_.erase(uid)) return false;
  if (quarantined_gauge_) quarantined_gauge_->Set(static_cast<double>(quarantined_.size()));
  return true;
}

void ResourceTracker::OnQuarantined(const BadObject& bad, WatchEventType type) {
  const std::string& uid = bad.meta.uid;
  if (type == WatchEventType::kDeleted) {
    Release(uid);
    if (uid.empty()) {
      ReportQuarantined(bad, "DELETED", "notice the deletion at the next relist");
      return;
    }
    ReportQuarantined(bad, "DELETED", "run the delete hook with the last handled state");
    RecordEvent("DELETED", uid);
    cache_.MarkGone(uid, nullptr);  // keeps the last good state seen, if any
    MarkGone(uid);
    Enqueue(uid);
    return;
  }
  bool is_new = uid.empty() || quarantined_.insert(uid).second;
  if (is_new) ReportQuarantined(bad, WatchEventTypeName(type), "skip it until it changes; its last handled state is kept");
}

void ResourceTracker::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) {
  if (on_first_list_) {
    on_first_list_(items);
    on_first_list_ = nullptr;
  }
  // Quarantined objects exist: their entries stay as they are and they are never tombstones.
  std::set<std::string> still_bad;
  bool unidentified = false;
  for (const BadObject& bad : quarantined) {
    if (bad.meta.uid.empty()) {
      unidentified = true;
      ReportQuarantined(bad, "listed", "skip it; deletions are not inferred from this list");
    } else if (still_bad.insert(bad.meta.uid).second && !quarantined_.count(bad.meta.uid)) {
      quarantined_.insert(bad.meta.uid);
      ReportQuarantined(bad, "listed", "skip it until it changes; its last handled state is kept");
    }
  }
  quarantined_ = still_bad;
  if (quarantined_gauge_) quarantined_gauge_->Set(static_cast<double>(quarantined_.size()));

  std::set<std::string> known_before;
  if (record_events_) {
    for (const auto& item : items) {
      auto cached = cache_.Get(item->meta.uid);
      if (cached && !cached->gone) known_before.insert(item->meta.uid);
    }
  }
  std::vector<std::string> changed = cache_.Replace(items, still_bad, /*keep_missing=*/unidentified);
  std::set<std::string> listed = still_bad;
  for (const auto& item : items) listed.insert(item->meta.uid);

  // The store may remember objects this process never saw: handled before a restart, or with
  // retries pending. Missing from the list means deleted.
  std::set<std::string> remembered;
  if (!unidentified) {  // an item without a readable uid could be any object the store remembers
    // Summaries: only uids are needed here, and whole diffbases of every object would double
    // the memory a big list takes.
    auto objects = store_.ListObjectSummaries();
    auto handlers = store_.ListAllHandlers();
    if (!objects.ok() || !handlers.ok()) {
      Log(LogLevel::kError, "state store read failed",
          {{"resource", scope_.id()},
           {"error", (!objects.ok() ? objects.status() : handlers.status()).ToString()},
           {"next", "deletions made while the agent was down are found at the next relist"}});
    } else {
      for (const auto& o : *objects) {
        if (scope_.Holds(o.resource, o.namespace_name)) remembered.insert(o.uid);
      }
      for (const auto& h : *handlers) {
        if (scope_.Holds(h.resource, h.namespace_name)) remembered.insert(h.uid);
      }
    }
  }
  for (const auto& uid : remembered) {
    if (listed.count(uid)) continue;
    auto cached = cache_.Get(uid);
    if (cached && cached->gone) continue;  // already a tombstone, and in `changed` if new
    cache_.MarkGone(uid, nullptr);
    changed.push_back(uid);
  }
  for (const auto& uid : changed) {
    auto cached = cache_.Get(uid);
    if (cached && cached->gone) {
      MarkGone(uid);
      RecordEvent("DELETED", uid);
    } else {
      RecordEvent(known_before.count(uid) ? "MODIFIED" : "ADDED", uid);
    }
    Enqueue(uid);
  }
  // After a restart: events stored but not yet handled.
  if (record_events_ && !listed_once_) {
    auto pending = store_.UidsWithPendingEvents(scope_.id(), scope_.namespace_name());
    if (pending.ok()) {
      for (const auto& uid : *pending) Enqueue(uid);
    }
  }
  listed_once_ = true;
  if (on_change_) on_change_();
}

void ResourceTracker::OnObject(ObjectPtr object) {
  std::string uid = object->meta.uid;
  if (Release(uid)) {
    Log(LogLevel::kInfo, "object no longer quarantined",
        {{"object", object->meta.Key()}, {"uid", uid}, {"resource", scope_.id()}, {"next", "handle it"}});
  }
  auto before = cache_.Get(uid);
  const char* type = before && !before->gone ? "MODIFIED" : "ADDED";
  const KubeObject& observed = *object;
  if (cache_.Upsert(object)) {
    RecordEvent(type, observed);
    Enqueue(uid);
  }
}

void ResourceTracker::OnDeleted(ObjectPtr last_state) {
  std::string uid = last_state->meta.uid;
  Release(uid);
  RecordEvent("DELETED", *last_state);
  cache_.MarkGone(uid, std::move(last_state));
  MarkGone(uid);
  Enqueue(uid);
}

}  // namespace nodehook
