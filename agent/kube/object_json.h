// Parsing of Kubernetes API JSON (objects, lists, watch event lines, Status bodies) into the
// plain types of kube_types.h. RapidJSON stays inside object_json.cc.
// Malformed input yields kInvalid naming the field and what was expected; it never throws.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agent/base/status.h"
#include "agent/kube/kube_types.h"

namespace nodehook {

// The fields of a metav1.Status the agent cares about (error bodies, watch ERROR events).
struct ApiStatus {
  int code = 0;
  std::string reason;   // "Expired", "NotFound", ...
  std::string message;
};

// One object, e.g. a GET response. `json` keeps the text exactly as given.
// Requires metadata.name and metadata.uid.
Result<KubeObject> ParseObject(std::string_view json);

// A list response: items, metadata.resourceVersion and metadata.continue. Items that lack
// `kind`/`apiVersion` (core lists omit them) get them from the list ("FooList" -> "Foo").
Result<ObjectList> ParseObjectList(std::string_view json);

// One watch line: {"type":"ADDED","object":{...}}. BOOKMARK objects need only
// metadata.resourceVersion; ERROR objects are Status objects whose code/message are copied
// into error_code/error_message.
Result<WatchEvent> ParseWatchEvent(std::string_view line);

// A metav1.Status body. Fails (kInvalid) if the text is not a JSON object.
Result<ApiStatus> ParseApiStatus(std::string_view json);

}  // namespace nodehook
