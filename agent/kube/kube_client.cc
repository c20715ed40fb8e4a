#include "agent/kube/kube_client.h"

#include <utility>

namespace nodehook {

Result<ObjectList> ListAll(KubeClient& client, const ResourceRef& r, int page_size) {
  ObjectList all;
  ListOptions options;
  options.limit = page_size;
  while (true) {
    auto page = client.List(r, options);
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
