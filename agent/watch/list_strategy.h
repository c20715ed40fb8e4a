// How a watcher reads a resource's complete state (its list) before watching it; the knob
// tuning.list_strategy. Pure functions; thread-safe.
//   kPaginated  consistent list in pages (limit + continue) read from etcd; the default.
//   kWatchCache resourceVersion=0 + resourceVersionMatch=NotOlderThan: one response served from
//               the API server's watch cache, no etcd read, not paginated by the server.
//   kStreaming  a watch with sendInitialEvents=true: the state arrives as ADDED events ending at a
//               BOOKMARK annotated k8s.io/initial-events-end, and the same stream goes on as the
//               watch (the Watcher handles it; see watcher.h).
#pragma once

#include <optional>
#include <string>

#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

enum class ListStrategy { kPaginated, kWatchCache, kStreaming };

// "paginated", "watch_cache", "streaming"; nullopt for anything else.
std::optional<ListStrategy> ListStrategyFromName(const std::string& name);
const char* ListStrategyName(ListStrategy strategy);

// The whole list for kPaginated (every page, `page_size` a page) or kWatchCache (one request).
// Not for kStreaming, which is a watch: that reads as kPaginated here.
Result<ObjectList> ListWith(KubeClient& client, const ResourceRef& r, ListStrategy strategy, int page_size);

}  // namespace nodehook
