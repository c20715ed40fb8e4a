#include "agent/core/object_cache.h"

namespace nodehook {

bool ObjectCache::Upsert(ObjectPtr object) {
  MutexLock lock(&mu_);
  CachedObject& entry = entries_[object->meta.uid];
  bool changed = entry.gone || !entry.object ||
                 entry.object->meta.resource_version != object->meta.resource_version;
  entry.object = std::move(object);
  entry.gone = false;
  return changed;
}

void ObjectCache::MarkGone(const std::string& uid, ObjectPtr last_seen) {
  MutexLock lock(&mu_);
  CachedObject& entry = entries_[uid];
  if (last_seen) entry.object = std::move(last_seen);
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
    CachedObject& entry = entries_[uid];
    if (entry.gone || !entry.object || entry.object->meta.resource_version != item->meta.resource_version) {
      changed.push_back(uid);
    }
    entry.object = item;
    entry.gone = false;
  }
  for (auto& [uid, entry] : entries_) {
    if (!listed.count(uid) && !entry.gone && !keep_missing && !keep.count(uid)) {
      entry.gone = true;
      changed.push_back(uid);
    }
  }
  return changed;
}

std::optional<CachedObject> ObjectCache::Get(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void ObjectCache::EraseIfGone(const std::string& uid) {
  MutexLock lock(&mu_);
  auto it = entries_.find(uid);
  if (it != entries_.end() && it->second.gone) entries_.erase(it);
}

std::vector<std::string> ObjectCache::Uids() const {
  MutexLock lock(&mu_);
  std::vector<std::string> uids;
  for (const auto& [uid, entry] : entries_) uids.push_back(uid);
  return uids;
}

size_t ObjectCache::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace nodehook
