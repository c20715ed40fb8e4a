// ObjectCache: the latest observed state of every object of one watched resource, as the watcher
// last saw it, plus tombstones for objects that disappeared and still await delete handling.
// The watcher writes, the reconciler reads. Thread-safe.
//
// Each new object version is read once, here, into its ObjectFacts (object_facts.h; outside the
// lock, on the writer's thread); every reader gets those facts with the object.
//
// Memory: an object's bytes are needed only until it is handled. Once the reconciler has stored
// a diffbase with the same essence it may drop them (DropBytes); the entry then keeps only its
// metadata (about 250 bytes instead of the object's size) and Get() says so through
// `handled_meta`: the state store's diffbase stands in for the bytes. A new resourceVersion
// brings the whole object back.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"

namespace nodehook {

struct CachedObject {
  // Latest seen state; null for a tombstone known only from the state store, and when the
  // bytes were dropped (then handled_meta is set).
  ObjectPtr object;
  FactsPtr facts;  // the object's facts; null exactly when `object` is
  bool gone = false;  // deleted from the cluster (DELETED event, or missing from a relist)
  // Set when the bytes were dropped after handling: the latest state's metadata. Its essence is
  // the stored diffbase's, whose last_object stands in for the object.
  std::optional<ObjectMeta> handled_meta;
};

class ObjectCache {
 public:
  // `spec`: what the facts of this resource's objects hold.
  explicit ObjectCache(FactsSpec spec = {}) : spec_(std::move(spec)) {}

  // Records the latest state. Returns false when nothing that matters changed (same resourceVersion).
  bool Upsert(ObjectPtr object);
  // Marks an object gone, keeping its last state for the delete hook.
  void MarkGone(const std::string& uid, ObjectPtr last_seen);
  // Replaces the whole content after a relist: every uid not in `items` becomes a tombstone,
  // except those in `keep` (listed but quarantined: left as they are), or every one when
  // `keep_missing`. Returns the uids whose entry changed (new, modified or newly gone), which
  // need reconciling. Unchanged entries whose bytes were dropped stay without them.
  std::vector<std::string> Replace(const std::vector<ObjectPtr>& items, const std::set<std::string>& keep = {},
                                   bool keep_missing = false);
  // Drops the bytes of a live object once a diffbase with its essence is stored, if its latest
  // state is still `resource_version` (a newer one may have arrived meanwhile).
  void DropBytes(const std::string& uid, const std::string& resource_version);

  std::optional<CachedObject> Get(const std::string& uid) const;
  bool Contains(const std::string& uid) const;
  // Drops a tombstone once its deletion was handled; a live entry is kept.
  void EraseIfGone(const std::string& uid);
  std::vector<std::string> Uids() const;
  // Entries, tombstones waiting for their delete hook included.
  size_t size() const;
  // Entries that hold their object's bytes.
  size_t with_bytes() const;

 private:
  struct Entry {
    ObjectPtr object;
    FactsPtr facts;
    ObjectMeta meta;  // only while the bytes are dropped; uid left empty (it is the key)
    bool dropped = false;
    bool gone = false;
    const std::string& resource_version() const { return dropped ? meta.resource_version : object->meta.resource_version; }
    // Takes `latest` (with `facts`, read for it, or null when it is the version held already);
    // true when it is new or its resourceVersion differs.
    bool Take(ObjectPtr latest, FactsPtr latest_facts);
  };
  // A version to take, with its facts read unless the cache holds that version already.
  struct Taken {
    ObjectPtr object;
    FactsPtr facts;
  };
  // Reads the facts of each object whose version is not cached (the lock is not held meanwhile).
  std::vector<Taken> ReadNew(const std::vector<ObjectPtr>& objects) const;

  const FactsSpec spec_;

  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by uid
};

}  // namespace nodehook
