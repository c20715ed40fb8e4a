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
//
// Each entry also holds the object's settled state: the latest version the reconciler found
// nothing left to do for on this node since the agent started (MarkSettled). It lives here, with
// the entry, so that a node with many objects keeps one record per object, not one per module;
// it goes when the entry goes (a handled deletion) or when the reconciler forgets the object.
#pragma once

#include <cstdint>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "agent/base/compact_uid.h"
#include "agent/base/mutex.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"

namespace nodehook {

// An object state that left nothing to do on this node: its resourceVersion (what `kubectl
// nodehook wait` compares with the live object) and its essence's digest (EssenceDigest; "" when
// not known), the target node outputs report as done.
struct SettledState {
  std::string resource_version;
  std::string digest;
};

struct CachedObject {
  // Latest seen state; null for a tombstone known only from the state store, and when the
  // bytes were dropped (then handled_meta is set).
  ObjectPtr object;
  FactsPtr facts;  // the object's facts; null exactly when `object` is
  bool gone = false;  // deleted from the cluster (DELETED event, or missing from a relist)
  // Set when the bytes were dropped after handling: the latest state's metadata. Its essence is
  // the stored diffbase's, whose last_object stands in for the object.
  std::optional<ObjectMeta> handled_meta;
  // What the reconciler last settled this object at (ObjectCache::MarkSettled); nullopt when
  // nothing since the agent started, i.e. this node's first sight of it.
  std::optional<SettledState> settled;
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

  // The reconciler found the state `resource_version` (essence digest `digest`, "" when the plan
  // had no facts) left nothing to do. A "" digest for the version already settled keeps the
  // digest known for it. Ignored when `uid` is not cached.
  void MarkSettled(const std::string& uid, const std::string& resource_version, const std::string& digest);
  // Forgets the settled state: the next reconcile is a first sight again.
  void Unsettle(const std::string& uid);
  // What MarkSettled last recorded for `uid`; nullopt when nothing (or `uid` is not cached).
  std::optional<SettledState> Settled(const std::string& uid) const;

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
  // The latest state while its bytes are held: the object and its facts (both null for a
  // tombstone known only from the state store).
  struct Held {
    ObjectPtr object;
    FactsPtr facts;
  };
  // The latest state once its bytes were dropped: its metadata (the uid is the entry's key).
  struct Dropped {
    std::string namespace_name;
    std::string name;
    std::string resource_version;
    bool deleting = false;
  };
  // Kept small, a map node of 192 bytes with its key (a CompactUid): a node may cache 10,000 of
  // them. So the bytes and the dropped metadata share their place, and the settled version is
  // kept apart only when it is not the latest state's, which at rest it is.
  struct Entry {
    std::variant<Held, Dropped> latest;
    std::unique_ptr<const std::string> settled_elsewhere;  // with `settled`: the version, when not the latest's
    uint64_t settled_digest = 0;                          // with `settled_digest_known`
    bool gone = false;
    bool settled = false;
    bool settled_digest_known = false;

    Held* held() { return std::get_if<Held>(&latest); }
    const Held* held() const { return std::get_if<Held>(&latest); }
    const Dropped* dropped() const { return std::get_if<Dropped>(&latest); }
    // The latest state's resourceVersion; null for a tombstone known only from the state store.
    const std::string* version() const;
    // With `settled`: the version settled at; else null.
    const std::string* settled_version() const;
    // Holds `object` with `facts` as the latest state; a settled version that was the one held
    // before is kept apart first.
    void Hold(ObjectPtr object, FactsPtr facts);
    std::optional<SettledState> Settled() const;
    // Takes `latest` (with `facts`, read for it, or null when it is the version held already);
    // true when it is new or its resourceVersion differs.
    bool Take(ObjectPtr latest, FactsPtr latest_facts);
  };
  // libstdc++'s map node is the tree's links (32 bytes), the key and the entry. 192 bytes is a
  // size class of jemalloc and of glibc's malloc; a field more takes the next one.
  static_assert(32 + sizeof(std::pair<const CompactUid, Entry>) <= 192, "an ObjectCache entry outgrew 192 bytes");
  // Reads the facts of a held version that has none (its bytes were dropped while it was read).
  void ReadFactsIfMissing(Entry& entry) const;

  // A version to take, with its facts read unless the cache holds that version already.
  struct Taken {
    ObjectPtr object;
    FactsPtr facts;
  };
  // Reads the facts of each object whose version is not cached (the lock is not held meanwhile).
  std::vector<Taken> ReadNew(const std::vector<ObjectPtr>& objects) const;

  const FactsSpec spec_;

  mutable Mutex mu_;
  std::map<CompactUid, Entry> entries_ GUARDED_BY(mu_);  // by uid
};

}  // namespace nodehook
