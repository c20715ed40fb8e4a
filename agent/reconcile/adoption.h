// Adoption: after a damaged state file was replaced by an empty one, the uids of the first lists
// (one per watched resource) get their diffbase stored without running create, since this node
// most likely handled them before; when the last one is adopted, the store's "adopt existing"
// mark is cleared. In memory only. (What the reconciler settled each object at lives with the
// object in its ObjectCache entry.)
// Thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "agent/base/mutex.h"

#include "storage/state_store.h"

namespace nodehook {

class Adoption {
 public:
  // `lists` first lists will each call AdoptOnce().
  void ExpectAdoption(int lists);
  void AdoptOnce(const std::vector<std::string>& uids);
  bool AdoptionPending(const std::string& uid) const;
  // `uid` was adopted; clears the store's mark after the last one (`store` is borrowed).
  void Adopted(const std::string& uid, StateStore& store);

 private:
  mutable Mutex mu_;
  std::set<std::string> adopt_ GUARDED_BY(mu_);
  int adopt_lists_pending_ GUARDED_BY(mu_) = 0;
};

}  // namespace nodehook
