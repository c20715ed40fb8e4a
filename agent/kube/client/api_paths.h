// Request paths and query strings for the Kubernetes REST API. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agent/kube/client/kube_types.h"

namespace nodehook {

// Percent-encodes everything except RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string UrlEncode(std::string_view text);

// CollectionPath()?limit=N[&continue=...][&resourceVersion=...[&resourceVersionMatch=...]]
// [&labelSelector=...][&fieldSelector=...]. limit is left out when 0. resourceVersion(Match) is
// left out when a continue token is given: the server refuses both.
std::string ListPath(const ResourceRef& r, const ListOptions& o);

// CollectionPath()?watch=1&resourceVersion=RV&allowWatchBookmarks=true
// [&sendInitialEvents=true&resourceVersionMatch=NotOlderThan]&timeoutSeconds=N
// [&labelSelector=...][&fieldSelector=...]. A streaming list always allows bookmarks: its end
// is one.
std::string WatchPath(const ResourceRef& r, const WatchOptions& o);

// The object's own path: .../namespaces/<ns>/<plural>/<name>.
std::string ObjectPath(const ObjectRef& o);

}  // namespace nodehook
