#include "agent/core/live_objects.h"

#include <algorithm>
#include <tuple>

namespace nodehook {

bool IsLiveHere(const WatchedResource& resource, const CachedObject& entry, const NodeTargeting* targeting) {
  if (entry.gone || !entry.object || entry.object->meta.deleting) return false;
  return !targeting || targeting->Matches(resource, *entry.object);
}

std::vector<ObjectPtr> LiveObjects(const WatchedResource& resource, const ObjectCache& cache,
                                   const NodeTargeting* targeting) {
  std::vector<ObjectPtr> live;
  for (const auto& uid : cache.Uids()) {
    auto entry = cache.Get(uid);
    if (entry && IsLiveHere(resource, *entry, targeting)) live.push_back(entry->object);
  }
  std::sort(live.begin(), live.end(), [](const ObjectPtr& a, const ObjectPtr& b) {
    return std::tie(a->meta.namespace_name, a->meta.name, a->meta.uid) <
           std::tie(b->meta.namespace_name, b->meta.name, b->meta.uid);
  });
  return live;
}

}  // namespace nodehook
