#include "agent/watch/list_strategy.h"

namespace nodehook {

std::optional<ListStrategy> ListStrategyFromName(const std::string& name) {
  if (name == "paginated") return ListStrategy::kPaginated;
  if (name == "watch_cache") return ListStrategy::kWatchCache;
  if (name == "streaming") return ListStrategy::kStreaming;
  return std::nullopt;
}

const char* ListStrategyName(ListStrategy strategy) {
  switch (strategy) {
    case ListStrategy::kPaginated: return "paginated";
    case ListStrategy::kWatchCache: return "watch_cache";
    case ListStrategy::kStreaming: return "streaming";
  }
  return "paginated";
}

Result<ObjectList> ListWith(KubeClient& client, const ResourceRef& r, ListStrategy strategy, int page_size) {
  if (strategy != ListStrategy::kWatchCache) return ListAll(client, r, page_size);
  // The server ignores limit with resourceVersion=0 on most versions and would page from the
  // cache on others; asking for no limit keeps it one response either way.
  ListOptions options;
  options.limit = 0;
  options.resource_version = "0";
  options.resource_version_match = "NotOlderThan";
  return client.List(r, options);
}

}  // namespace nodehook
