#include "agent/watch/object_cache.h"

#include "agent/object/essence.h"

namespace nodehook {

void ObjectCache::ReadFactsIfMissing(Entry& entry) const {
  // Its bytes were dropped meanwhile (after ReadNew looked): the facts are read here.
  Held* h = entry.held();
  if (h && h->object && !h->facts) h->facts = ReadFacts(h->object->json, spec_);
}

const std::string* ObjectCache::Entry::version() const {
  if (const Dropped* d = dropped()) return &d->resource_version;
  const Held* h = held();
  return h->object ? &h->object->meta.resource_version : nullptr;
}

const std::string* ObjectCache::Entry::settled_version() const {
  if (!settled) return nullptr;
  return settled_elsewhere ? settled_elsewhere.get() : version();
}

void ObjectCache::Entry::Hold(ObjectPtr object, FactsPtr facts) {
  const std::string* was = version();
  if (settled && !settled_elsewhere && (!object || object->meta.resource_version != *was)) {
    settled_elsewhere = std::make_unique<const std::string>(*was);
  }
  latest = Held{std::move(object), std::move(facts)};
}

std::optional<SettledState> ObjectCache::Entry::Settled() const {
  const std::string* version = settled_version();
  if (!version) return std::nullopt;
  return SettledState{*version, settled_digest_known ? DigestText(settled_digest) : std::string()};
}

bool ObjectCache::Entry::Take(ObjectPtr latest_object, FactsPtr latest_facts) {
  const std::string* now = version();
  const bool changed = gone || !now || *now != latest_object->meta.resource_version;
  if (changed || !dropped()) {
    // The same version as held keeps its facts; it was read when it first came.
    const Held* h = held();
    if (!latest_facts || (h && h->object && !changed)) latest_facts = h ? h->facts : nullptr;
    Hold(std::move(latest_object), std::move(latest_facts));
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
      if (it == entries_.end() || it->second.gone) continue;
      const Entry& entry = it->second;
      const bool held = (entry.held() && entry.held()->facts) || entry.dropped();
      known[i] = held && *entry.version() == objects[i]->meta.resource_version;
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
  ReadFactsIfMissing(entry);
  return changed;
}

void ObjectCache::MarkGone(const std::string& uid, ObjectPtr last_seen) {
  std::vector<Taken> taken;
  if (last_seen) taken = ReadNew({std::move(last_seen)});
  MutexLock lock(&mu_);
  Entry& entry = entries_[CompactUid(uid)];
  if (!taken.empty()) {
    const Held* h = entry.held();
    bool same_version = h && h->facts && h->object->meta.resource_version == taken[0].object->meta.resource_version;
    if (!taken[0].facts && same_version) taken[0].facts = h->facts;
    if (!taken[0].facts) taken[0].facts = ReadFacts(taken[0].object->json, spec_);  // changed meanwhile
    entry.Hold(std::move(taken[0].object), std::move(taken[0].facts));
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
    ReadFactsIfMissing(entry);
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
  const Held* h = entry.held();
  if (entry.gone || !h || !h->object || h->object->meta.resource_version != resource_version) return;
  const ObjectMeta& meta = h->object->meta;
  Dropped dropped{meta.namespace_name, meta.name, meta.resource_version, meta.deleting};
  entry.latest = std::move(dropped);
}

std::optional<CachedObject> ObjectCache::Get(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return std::nullopt;
  const Entry& entry = it->second;
  CachedObject out{nullptr, nullptr, entry.gone, std::nullopt, std::nullopt};
  if (const Held* h = entry.held()) {
    out.object = h->object;
    out.facts = h->facts;
  } else if (const Dropped* d = entry.dropped()) {
    out.handled_meta = ObjectMeta{uid, d->namespace_name, d->name, d->resource_version, d->deleting};
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
  const std::string* settled = entry.settled_version();
  if (digest.empty() && settled && *settled == resource_version) return;
  entry.settled = true;
  const std::string* latest = entry.version();
  if (latest && *latest == resource_version) {
    entry.settled_elsewhere.reset();
  } else {
    entry.settled_elsewhere = std::make_unique<const std::string>(resource_version);
  }
  entry.settled_digest_known = ParseDigest(digest, &entry.settled_digest);
}

void ObjectCache::Unsettle(const std::string& uid) {
  MutexLock lock(&mu_);
  auto it = entries_.find(CompactUid(uid));
  if (it == entries_.end()) return;
  it->second.settled = it->second.settled_digest_known = false;
  it->second.settled_elsewhere.reset();
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
  for (const auto& [key, entry] : entries_) n += entry.held() && entry.held()->object ? 1 : 0;
  return n;
}

}  // namespace nodehook
