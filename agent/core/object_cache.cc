#include "agent/core/object_cache.h"

namespace nodehook {

bool ObjectCache::Entry::Take(ObjectPtr latest) {
  bool changed = gone || (!object && !dropped) || resource_version() != latest->meta.resource_version;
  if (changed || !dropped) {
    object = std::move(latest);
    meta = ObjectMeta();
    dropped = false;
  }
  gone = false;
  return changed;
}

bool ObjectCache::Upsert(ObjectPtr object) {
  MutexLock lock(&mu_);
  Entry& entry = entries_[object->meta.uid];
  return entry.Take(std::move(object));
}

void ObjectCache::MarkGone(const std::string& uid, ObjectPtr last_seen) {
  MutexLock lock(&mu_);
  Entry& entry = entries_[uid];
  if (last_seen) {
    entry.object = std::move(last_seen);
    entry.meta = ObjectMeta();
    entry.dropped = false;
  }
  entry.gone = true;
}

std::vector<std::string> ObjectCache::Replace(const std::vector<ObjectPtr>& items, const std::set<std::string>& keep,
                                              bool keep_missing) {
  MutexLock lock(&mu_);
  std::vector<std::string> changed;
  std::set<std::string> listed;
  for (const auto& item : items) {
    const std::string& uid = item->meta.uid;
    listed.insert(uid);
    if (entries_[uid].Take(item)) changed.push_back(uid);
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
  entry.dropped = true;
}

std::optional<CachedObject> ObjectCache::Get(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it == entries_.end()) return std::nullopt;
  const Entry& entry = it->second;
  CachedObject out{entry.object, entry.gone, std::nullopt};
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
