#include "agent/watch/object_cache.h"

#include "agent/object/essence.h"

namespace nodehook {

void ObjectCache::Entry::ClearDropped() {
  // Freed, not cleared: a cleared string keeps its buffer.
  std::string().swap(dropped_namespace);
  std::string().swap(dropped_name);
  std::string().swap(dropped_version);
  dropped = false;
  dropped_deleting = false;
}

std::optional<SettledState> ObjectCache::Entry::Settled() const {
  if (!settled) return std::nullopt;
  return SettledState{settled_version, settled_digest_known ? DigestText(settled_digest) : std::string()};
}

bool ObjectCache::Entry::Take(ObjectPtr latest, FactsPtr latest_facts) {
  bool changed = gone || (!object && !dropped) || resource_version() != latest->meta.resource_version;
  if (changed || !dropped) {
    // The same version as held keeps its facts; it was read when it first came.
    if (!latest_facts || (object && !changed)) latest_facts = facts;
    object = std::move(latest);
    facts = std::move(latest_facts);
    ClearDropped();
  }
  gone = false;
  return changed;
}

std::vector<ObjectCache::Taken> ObjectCache::ReadNew(const std::vector<ObjectPtr>& objects) const {
  std::vector<Taken> taken(objects.size());
  std::vector<bool> known(objects.size(), false);
  {
    MutexLock lock(&mu_);
    for (size_t i = 0; i < objects.size(); ++i) {
      auto it = entries_.find(CompactUid(objects[i]->meta.uid));
      // A version held already keeps its facts; one whose bytes were dropped stays without them.
      const bool held = it != entries_.end() && !it->second.gone && (it->second.facts || it->second.dropped);
      known[i] = held && it->second.resource_version() == objects[i]->meta.resource_version;
    }
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    taken[i].object = objects[i];
    if (!known[i]) taken[i].facts = ReadFacts(objects[i]->json, spec_);
  }
  return taken;
}

bool ObjectCache::Upsert(ObjectPtr object) {
  std::vector<Taken> taken = ReadNew({std::move(object)});
  MutexLock lock(&mu_);
  Entry& entry = entries_[CompactUid(taken[0].object->meta.uid)];
  bool changed = entry.Take(std::move(taken[0].object), std::move(taken[0].facts));
  if (entry.object && !entry.facts) entry.facts = ReadFacts(entry.object->json, spec_);  // dropped meanwhile
  return changed;
}

void ObjectCache::MarkGone(const std::string& uid, ObjectPtr last_seen) {
  std::vector<Taken> taken;
  if (last_seen) taken = ReadNew({std::move(last_seen)});
  MutexLock lock(&mu_);
  Entry& entry = entries_[CompactUid(uid)];
  if (!taken.empty()) {
    bool same_version = entry.object && entry.facts &&
                        entry.object->meta.resource_version == taken[0].object->meta.resource_version;
    if (!taken[0].facts && same_version) taken[0].facts = entry.facts;
    if (!taken[0].facts) taken[0].facts = ReadFacts(taken[0].object->json, spec_);  // changed meanwhile
    entry.object = std::move(taken[0].object);
    entry.facts = std::move(taken[0].facts);
    entry.ClearDropped();
  }
  entry.gone = true;
}

std::vector<std::string> ObjectCache::Replace(const std::vector<ObjectPtr>& items, const std::set<std::string>& keep,
                                              bool keep_missing) {
  std::vector<Taken> taken = ReadNew(items);
  MutexLock lock(&mu_);
  std::vector<std::string> changed;
  std::set<CompactUid> listed;
  for (auto& item : taken) {
    const std::string uid = item.object->meta.uid;
    CompactUid key(uid);
    Entry& entry = entries_[key];
    listed.insert(std::move(key));
    if (entry.Take(std::move(item.object), std::move(item.facts))) changed.push_back(uid);
    if (entry.object && !entry.facts) entry.facts = ReadFacts(entry.object->json, spec_);  // dropped meanwhile
  }
  for (auto& [key, entry] : entries_) {
    if (!listed.count(key) && !entry.gone && !keep_missing && !keep.count(key.str())) {
      entry.gone = true;
      changed.push_back(key.str());
    }
  }
  return changed;
}

void ObjectCache::DropBytes(const std::string& uid, const std::string& resource_version) {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  if (entry.gone || !entry.object || entry.object->meta.resource_version != resource_version) return;
  const ObjectMeta& meta = entry.object->meta;
  entry.dropped_namespace = meta.namespace_name;
  entry.dropped_name = meta.name;
  entry.dropped_version = meta.resource_version;
  entry.dropped_deleting = meta.deleting;
  entry.object.reset();
  entry.facts.reset();
  entry.dropped = true;
}

std::optional<CachedObject> ObjectCache::Get(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return std::nullopt;
  const Entry& entry = it->second;
  CachedObject out{entry.object, entry.facts, entry.gone, std::nullopt, std::nullopt};
  if (entry.dropped) {
    out.handled_meta = ObjectMeta{uid, entry.dropped_namespace, entry.dropped_name, entry.dropped_version,
                                  entry.dropped_deleting};
  }
  out.settled = entry.Settled();
  return out;
}

void ObjectCache::MarkSettled(const std::string& uid, const std::string& resource_version, const std::string& digest) {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  // A plan without the live object's facts (its bytes dropped) keeps the digest of that version.
  if (digest.empty() && entry.settled && entry.settled_version == resource_version) return;
  entry.settled = true;
  entry.settled_version = resource_version;
  entry.settled_digest_known = ParseDigest(digest, &entry.settled_digest);
}

void ObjectCache::Unsettle(const std::string& uid) {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return;
  it->second.settled = it->second.settled_digest_known = false;
  std::string().swap(it->second.settled_version);
}

std::optional<SettledState> ObjectCache::Settled(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return std::nullopt;
  return it->second.Settled();
}

bool ObjectCache::Contains(const std::string& uid) const {
  MutexLock lock(&mu_);
  return entries_.count(CompactUid(uid)) > 0;
}

void ObjectCache::EraseIfGone(const std::string& uid) {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it != entries_.end() && it->second.gone) entries_.erase(it);
}

std::vector<std::string> ObjectCache::Uids() const {
  MutexLock lock(&mu_);
  std::vector<std::string> uids;
  uids.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) uids.push_back(key.str());
  return uids;
}

size_t ObjectCache::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

size_t ObjectCache::with_bytes() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, entry] : entries_) n += entry.object ? 1 : 0;
  return n;
}

}  // namespace nodehook
