#include "agent/kube/client/api_paths.h"

namespace nodehook {
namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// Appends "&key=value" (or "?key=value" for the first parameter).
void AddParam(std::string* path, std::string_view key, std::string_view value) {
  path->push_back(path->find('?') == std::string::npos ? '?' : '&');
  path->append(key);
  path->push_back('=');
  path->append(UrlEncode(value));
}

void AddSelectors(std::string* path, const ResourceRef& r) {
  if (!r.label_selector.empty()) AddParam(path, "labelSelector", r.label_selector);
  if (!r.field_selector.empty()) AddParam(path, "fieldSelector", r.field_selector);
}

}  // namespace

std::string UrlEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (IsUnreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::string ListPath(const ResourceRef& r, const ListOptions& o) {
  std::string path = r.CollectionPath();
  if (o.limit > 0) AddParam(&path, "limit", std::to_string(o.limit));
  if (!o.continue_token.empty()) {
    AddParam(&path, "continue", o.continue_token);
  } else if (!o.resource_version.empty()) {
    AddParam(&path, "resourceVersion", o.resource_version);
    if (!o.resource_version_match.empty()) AddParam(&path, "resourceVersionMatch", o.resource_version_match);
  }
  AddSelectors(&path, r);
  return path;
}

std::string WatchPath(const ResourceRef& r, const WatchOptions& o) {
  std::string path = r.CollectionPath();
  AddParam(&path, "watch", "1");
  if (!o.resource_version.empty()) AddParam(&path, "resourceVersion", o.resource_version);
  if (o.allow_bookmarks || o.send_initial_events) AddParam(&path, "allowWatchBookmarks", "true");
  if (o.send_initial_events) {
    AddParam(&path, "sendInitialEvents", "true");
    AddParam(&path, "resourceVersionMatch", "NotOlderThan");
  }
  if (o.timeout_seconds > 0) AddParam(&path, "timeoutSeconds", std::to_string(o.timeout_seconds));
  AddSelectors(&path, r);
  return path;
}

std::string ObjectPath(const ObjectRef& o) {
  ResourceRef in_namespace = o.resource;
  in_namespace.namespace_name = o.namespace_name;
  return in_namespace.CollectionPath() + "/" + UrlEncode(o.name) +
         (o.subresource.empty() ? "" : "/" + UrlEncode(o.subresource));
}

}  // namespace nodehook
