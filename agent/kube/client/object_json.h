// Parsing of Kubernetes API JSON (objects, lists, watch event lines, Status bodies) into the
// plain types of kube_types.h. Texts are validated by one non-recursive scan (json_scan.h);
// only the few metadata fields the agent routes on are decoded, and objects keep the exact
// bytes the server sent, so hooks get every number and escape as the API server wrote it.
// Each object is measured against ObjectLimits on its own: in a list or a watch event a bad
// object is quarantined (BadObject) instead of failing the whole text.
// Malformed input yields kInvalid naming the field and what was expected; it never throws.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

// The fields of a metav1.Status the agent cares about (error bodies, watch ERROR events).
struct ApiStatus {
  int code = 0;
  std::string reason;   // "Expired", "NotFound", ...
  std::string message;
  // details.causes[].message: what the message leaves out, e.g. which PodDisruptionBudget refused
  // an eviction (its message says only "would violate the pod's disruption budget").
  std::vector<std::string> causes{};
};

// One object, e.g. a GET response. `json` keeps the text exactly as given.
// Requires metadata.name and metadata.uid; an object beyond `limits` is refused (kInvalid).
Result<KubeObject> ParseObject(std::string_view json, const ObjectLimits& limits = {});

// A list response: items, metadata.resourceVersion and metadata.continue. Items that lack
// `kind`/`apiVersion` (core lists omit them) get them from the list ("FooList" -> "Foo"),
// inserted as text in front of the item's own bytes. Items beyond `limits` or with unreadable
// metadata go to `quarantined`; only a malformed list as a whole fails.
Result<ObjectList> ParseObjectList(std::string_view json, const ObjectLimits& limits = {});

// One watch line: {"type":"ADDED","object":{...}}. BOOKMARK objects need only
// metadata.resourceVersion; one annotated "k8s.io/initial-events-end": "true" sets
// initial_events_end; ERROR objects are Status objects whose code/message are copied
// into error_code/error_message. An ADDED/MODIFIED/DELETED object beyond `limits` or with
// unreadable metadata comes back as an event with `quarantined` set; only a malformed line
// (not JSON, no type, no object) fails.
Result<WatchEvent> ParseWatchEvent(std::string_view line, const ObjectLimits& limits = {});

// A metav1.Status body. Fails (kInvalid) if the text is not a JSON object.
Result<ApiStatus> ParseApiStatus(std::string_view json);

}  // namespace nodehook
