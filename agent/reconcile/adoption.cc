#include "agent/reconcile/adoption.h"

#include "agent/base/log.h"

namespace nodehook {

void Adoption::ExpectAdoption(int lists) {
  MutexLock lock(&mu_);
  adopt_lists_pending_ = lists;
}

void Adoption::AdoptOnce(const std::vector<std::string>& uids) {
  MutexLock lock(&mu_);
  adopt_.insert(uids.begin(), uids.end());
  if (adopt_lists_pending_ > 0) --adopt_lists_pending_;
}

bool Adoption::AdoptionPending(const std::string& uid) const {
  MutexLock lock(&mu_);
  return adopt_.count(uid) > 0;
}

void Adoption::Adopted(const std::string& uid, StateStore& store) {
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
