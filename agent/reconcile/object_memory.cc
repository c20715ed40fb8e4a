#include "agent/reconcile/object_memory.h"

#include "agent/base/log.h"

namespace nodehook {

bool ObjectMemory::FirstSight(const std::string& uid) const {
  MutexLock lock(&mu_);
  return seen_.count(uid) == 0;
}

void ObjectMemory::MarkSeen(const std::string& uid, const std::string& resource_version, const std::string& digest) {
  MutexLock lock(&mu_);
  auto& settled = seen_[uid];
  // A plan without the live object's facts (its bytes dropped) keeps the digest of that version.
  if (digest.empty() && settled.resource_version == resource_version) return;
  settled = Settled{resource_version, digest};
}

void ObjectMemory::Unsee(const std::string& uid) {
  MutexLock lock(&mu_);
  seen_.erase(uid);
}

std::string ObjectMemory::SettledVersion(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = seen_.find(uid);
  return it == seen_.end() ? "" : it->second.resource_version;
}

std::optional<ObjectMemory::Settled> ObjectMemory::SettledState(const std::string& uid) const {
  MutexLock lock(&mu_);
  auto it = seen_.find(uid);
  if (it == seen_.end()) return std::nullopt;
  return it->second;
}

void ObjectMemory::ExpectAdoption(int lists) {
  MutexLock lock(&mu_);
  adopt_lists_pending_ = lists;
}

void ObjectMemory::AdoptOnce(const std::vector<std::string>& uids) {
  MutexLock lock(&mu_);
  adopt_.insert(uids.begin(), uids.end());
  if (adopt_lists_pending_ > 0) --adopt_lists_pending_;
}

bool ObjectMemory::AdoptionPending(const std::string& uid) const {
  MutexLock lock(&mu_);
  return adopt_.count(uid) > 0;
}

void ObjectMemory::Adopted(const std::string& uid, StateStore& store) {
  bool done = false;
  {
    MutexLock lock(&mu_);
    if (!adopt_.erase(uid)) return;
    done = adopt_.empty() && adopt_lists_pending_ == 0;
  }
  if (!done) return;
  Status cleared = store.SetAdoptExisting(false);
  Log(cleared.ok() ? LogLevel::kInfo : LogLevel::kError, "adoption finished",
      {{"error", cleared.ToString()}, {"next", "handle new objects with create again"}});
}

}  // namespace nodehook
