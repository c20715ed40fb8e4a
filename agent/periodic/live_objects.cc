#include "agent/periodic/live_objects.h"

#include <algorithm>
#include <tuple>

namespace nodehook {

bool IsLiveHere(const WatchedResource& resource, const CachedObject& entry, const NodeTargeting& targeting) {
  if (entry.gone || !entry.object || !entry.facts || entry.object->meta.deleting) return false;
  return targeting.Matches(resource, *entry.object, *entry.facts);
}

std::vector<CachedObject> LiveObjects(const WatchedResource& resource, const ObjectCache& cache,
                                      const NodeTargeting& targeting) {
  std::vector<CachedObject> live;
  for (const auto& uid : cache.Uids()) {
    auto entry = cache.Get(uid);
    if (entry && IsLiveHere(resource, *entry, targeting)) live.push_back(std::move(*entry));
  }
  std::sort(live.begin(), live.end(), [](const CachedObject& a, const CachedObject& b) {
    return std::tie(a.object->meta.namespace_name, a.object->meta.name, a.object->meta.uid) <
           std::tie(b.object->meta.namespace_name, b.object->meta.name, b.object->meta.uid);
  });
  return live;
}

}  // namespace nodehook
