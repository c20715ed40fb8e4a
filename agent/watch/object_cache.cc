#include "agent/watch/object_cache.h"

namespace nodehook {

bool ObjectCache::Entry::Take(ObjectPtr latest, FactsPtr latest_facts) {
  bool changed = gone || (!object && !dropped) || resource_version() != latest->meta.resource_version;
  if (changed || !dropped) {
    // The same version as held keeps its facts; it was read when it first came.
    if (!latest_facts || (object && !changed)) latest_facts = facts;
    object = std::move(latest);
    facts = std::move(latest_facts);
    meta = ObjectMeta();
    dropped = false;
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
      auto it = entries_.find(objects[i]->meta.uid);
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
  Entry& entry = entries_[taken[0].object->meta.uid];
  bool changed = entry.Take(std::move(taken[0].object), std::move(taken[0].facts));
  if (entry.object && !entry.facts) entry.facts = ReadFacts(entry.object->json, spec_);  // dropped meanwhile
  return changed;
}

void ObjectCache::MarkGone(const std::string& uid, ObjectPtr last_seen) {
  std::vector<Taken> taken;
  if (last_seen) taken = ReadNew({std::move(last_seen)});
  MutexLock lock(&mu_);
  Entry& entry = entries_[uid];
  if (!taken.empty()) {
    bool same_version = entry.object && entry.facts &&
                        entry.object->meta.resource_version == taken[0].object->meta.resource_version;
    if (!taken[0].facts && same_version) taken[0].facts = entry.facts;
    if (!taken[0].facts) taken[0].facts = ReadFacts(taken[0].object->json, spec_);  // changed meanwhile
    entry.object = std::move(taken[0].object);
    entry.facts = std::move(taken[0].facts);
    entry.meta = ObjectMeta();
    entry.dropped = false;
  }
  entry.gone = true;
}

std::vector<std::string> ObjectCache::Replace(const std::vector<ObjectPtr>& items, const std::set<std::string>& keep,
                                              bool keep_missing) {
  std::vector<Taken> taken = ReadNew(items);
  MutexLock lock(&mu_);
  std::vector<std::string> changed;
  std::set<std::string> listed;
  for (auto& item : taken) {
    const std::string uid = item.object->meta.uid;
    listed.insert(uid);
    Entry& entry = entries_[uid];
    if (entry.Take(std::move(item.object), std::move(item.facts))) changed.push_back(uid);
    if (entry.object && !entry.facts) entry.facts = ReadFacts(entry.object->json, spec_);  // dropped meanwhile
  }
  for (auto& [uid, entry] : entries_) {
    if (!listed.count(uid) && !entry.gone && !keep_missing && !keep.count(uid)) {
      entry.gone = true;
      changed.push_back(uid);
    }
  }
  return changed;
}

void ObjectCache::DropBytes(const std::string& uid, const std::string& resource_version) {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  Entry& entry = it->second;
  if (entry.gone || !entry.object || entry.object->meta.resource_version != resource_version) return;
  entry.meta = entry.object->meta;
  entry.meta.uid.clear();
  entry.object.reset();
  entry.facts.reset();
  entry.dropped = true;
}

std::optional<CachedObject> ObjectCache::Get(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it == entries_.end()) return std::nullopt;
  const Entry& entry = it->second;
  CachedObject out{entry.object, entry.facts, entry.gone, std::nullopt};
  if (entry.dropped) {
    out.handled_meta = entry.meta;
    out.handled_meta->uid = uid;
  }
  return out;
}

bool ObjectCache::Contains(const std::string& uid) const {
  MutexLock lock(&mu_);
  return entries_.count(uid) > 0;
}

void ObjectCache::EraseIfGone(const std::string& uid) {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it != entries_.end() && it->second.gone) entries_.erase(it);
}

std::vector<std::string> ObjectCache::Uids() const {
  MutexLock lock(&mu_);
  std::vector<std::string> uids;
  uids.reserve(entries_.size());
  for (const auto& [uid, entry] : entries_) uids.push_back(uid);
  return uids;
}

size_t ObjectCache::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

size_t ObjectCache::with_bytes() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [uid, entry] : entries_) n += entry.object ? 1 : 0;
  return n;
}

}  // namespace nodehook
