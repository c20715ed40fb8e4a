// LiveObjects: the objects of one resource this node handles right now: in the cluster, not being
// deleted, and (with node targeting) matching this node. What periodic checks run for, and what
// the snapshot hook sees. Stateless; thread-safe as the cache is.
#pragma once

#include <vector>

#include "agent/config/config.h"
#include "agent/targeting/node_targeting.h"
#include "agent/watch/object_cache.h"

namespace nodehook {

bool IsLiveHere(const WatchedResource& resource, const CachedObject& entry, const NodeTargeting& targeting);

// Every live object, ordered by namespace, name, uid.
std::vector<CachedObject> LiveObjects(const WatchedResource& resource, const ObjectCache& cache,
                                      const NodeTargeting& targeting);

}  // namespace nodehook
