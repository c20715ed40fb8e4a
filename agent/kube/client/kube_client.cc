#include "agent/kube/client/kube_client.h"

#include <utility>

#include "agent/base/log.h"

namespace nodehook {

Result<ObjectList> ListAll(KubeClient& client, const ResourceRef& r, int page_size) {
  ObjectList all;
  ListOptions options;
  options.limit = page_size;
  while (true) {
    auto page = client.List(r, options);
    if (!page.ok() && page.status().code() == StatusCode::kGone && !options.continue_token.empty()) {
      // The continue token expired (its snapshot was compacted): starting over in pages could
      // expire again for a list that always outlives the token, so, as client-go's pager does,
      // one unpaginated list instead.
      Log(LogLevel::kWarn, "list continue token expired",
          {{"resource", r.Id()}, {"items_so_far", all.items.size()},
           {"error", page.status().ToString()}, {"next", "list everything at once, without pages"}});
      ListOptions whole;
      whole.limit = 0;
      return client.List(r, whole);
    }
    if (!page.ok()) return page.status();
    for (auto& item : page->items) all.items.push_back(std::move(item));
    for (auto& bad : page->quarantined) all.quarantined.push_back(std::move(bad));
    // Every page of one paginated list is served from the same snapshot.
    all.resource_version = page->resource_version;
    if (page->continue_token.empty()) return all;
    if (page->continue_token == options.continue_token) {
      return InternalError("list " + r.Id() + ": server repeated continue token");
    }
    options.continue_token = page->continue_token;
  }
}

}  // namespace nodehook
