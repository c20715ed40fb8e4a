#include "agent/kube/client/kube_types.h"

namespace nodehook {

std::string ResourceRef::CollectionPath() const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (!namespace_name.empty()) path += "/namespaces/" + namespace_name;
  return path + "/" + plural;
}

std::string ResourceRef::Id() const {
  return group.empty() ? plural + "/" + version : plural + "." + group + "/" + version;
}

const char* WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

}  // namespace nodehook
