// ObjectMemory: what the reconciler remembers about objects between calls, in memory only:
//   seen      uids handled or found unchanged since the agent started (no resume for them),
//             each with the resourceVersion of the latest state that left nothing to do (its
//             "settled" version: what `kubectl nodehook wait` compares with the live object);
//   adoption  after a damaged state file was replaced by an empty one, the uids of the first
//             lists (one per watched resource) get their diffbase stored without running create,
//             since this node most likely handled them before; when the last one is adopted, the
//             store's "adopt existing" mark is cleared.
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/mutex.h"

#include "storage/state_store.h"

namespace nodehook {

class ObjectMemory {
 public:
  bool FirstSight(const std::string& uid) const;
  // `resource_version`: the object state that was handled, or found unchanged; `digest`: its
  // essence's digest ("" when not known).
  void MarkSeen(const std::string& uid, const std::string& resource_version, const std::string& digest = "");
  void Unsee(const std::string& uid);
  // The resourceVersion MarkSeen last recorded for `uid`; "" when none since the agent started.
  std::string SettledVersion(const std::string& uid) const;
  struct Settled {
    std::string resource_version;
    std::string digest;
  };
  // What MarkSeen last recorded for `uid`; nullopt when nothing since the agent started.
  std::optional<Settled> SettledState(const std::string& uid) const;

  // `lists` first lists will each call AdoptOnce().
  void ExpectAdoption(int lists);
  void AdoptOnce(const std::vector<std::string>& uids);
  bool AdoptionPending(const std::string& uid) const;
  // `uid` was adopted; clears the store's mark after the last one (`store` is borrowed).
  void Adopted(const std::string& uid, StateStore& store);

 private:
  mutable Mutex mu_;
  std::map<std::string, Settled> seen_ GUARDED_BY(mu_);  // uid -> settled resourceVersion and digest
  std::set<std::string> adopt_ GUARDED_BY(mu_);
  int adopt_lists_pending_ GUARDED_BY(mu_) = 0;
};

}  // namespace nodehook
