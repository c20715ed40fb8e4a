// ObjectCache: the latest observed state of every object of one watched resource, as the watcher
// last saw it, plus tombstones for objects that disappeared and still await delete handling.
// The watcher writes, the reconciler reads. Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/kube/kube_types.h"

namespace nodehook {

struct CachedObject {
  ObjectPtr object;   // latest seen state; null for a tombstone known only from the state store
  bool gone = false;  // deleted from the cluster (DELETED event, or missing from a relist)
};

class ObjectCache {
 public:
  // Records the latest state. Returns false when nothing that matters changed (same resourceVersion).
  bool Upsert(ObjectPtr object);
  // Marks an object gone, keeping its last state for the delete hook.
  void MarkGone(const std::string& uid, ObjectPtr last_seen);
  // Replaces the whole content after a relist: every uid not in `items` becomes a tombstone,
  // except those in `keep` (listed but quarantined: left as they are), or every one when
  // `keep_missing`. Returns the uids whose entry changed (new, modified or newly gone), which
  // need reconciling.
  std::vector<std::string> Replace(const std::vector<ObjectPtr>& items, const std::set<std::string>& keep = {},
                                   bool keep_missing = false);

  std::optional<CachedObject> Get(const std::string& uid) const;
  // Drops a tombstone once its deletion was handled; a live entry is kept.
  void EraseIfGone(const std::string& uid);
  std::vector<std::string> Uids() const;
  // Entries, tombstones waiting for their delete hook included.
  size_t size() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, CachedObject> entries_ GUARDED_BY(mu_);  // by uid
};

}  // namespace nodehook
