#include "agent/core/node_directory.h"

namespace nodehook {

Result<std::set<std::string>> NodeDirectory::Names() {
  std::lock_guard<std::mutex> lock(mu_);
  if (listed_ && clock_.Now() - listed_at_ < max_age_) return names_;
  auto nodes = ListAll(client_, ResourceRef{"", "v1", "nodes", "", ""});
  if (!nodes.ok()) return nodes.status();
  names_.clear();
  for (const auto& n : nodes->items) names_.insert(n.meta.name);
  listed_at_ = clock_.Now();
  listed_ = true;
  return names_;
}

}  // namespace nodehook
