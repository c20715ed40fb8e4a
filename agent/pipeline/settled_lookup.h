// SettledLookup: the settled resourceVersion of an object by resource and uid, read from the
// agent's caches, as each /v1/objects snapshot carries it (ObjectViewsSnapshot::settled_version).
// A snapshot is shared with the HTTP thread and may outlive the agent that made it (an answer
// still being written while the agent stops), so the snapshot holds this object, not the caches:
// once the agent has detached, lookups answer "" and no longer touch them.
// Thread-safe; Detach() waits for lookups under way.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "agent/base/mutex.h"

namespace nodehook {

class SettledLookup {
 public:
  using Source = std::function<std::string(std::string_view resource, const std::string& uid)>;

  explicit SettledLookup(Source source) : source_(std::move(source)) {}

  std::string operator()(std::string_view resource, const std::string& uid) const EXCLUDES(mu_) {
    ReaderMutexLock lock(&mu_);
    return source_ ? source_(resource, uid) : std::string();
  }

  // After this returns, the source is never called again.
  void Detach() EXCLUDES(mu_) {
    WriterMutexLock lock(&mu_);
    source_ = nullptr;
  }

 private:
  mutable SharedMutex mu_;
  Source source_ GUARDED_BY(mu_);
};

}  // namespace nodehook
