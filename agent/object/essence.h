// The essence of an object: what a change must touch to count as an update. Like kopf, it is the
// whole object minus status, apiVersion/kind and bookkeeping metadata; labels and annotations stay.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "agent/base/status.h"

namespace nodehook {

// Canonical JSON (keys sorted, no whitespace) of the object's essence, with `ignored_paths`
// (dotted, e.g. "metadata.annotations.note" or "spec.replicas") removed. Equal essences mean
// "nothing to do"; resourceVersion-only and status-only changes give equal essences.
Result<std::string> ComputeEssence(const std::string& object_json, const std::vector<std::string>& ignored_paths);

// The same from a parsed object (parsed with kExactParseFlags), which it strips in place: for
// callers that read other facts from the same parse first (object_facts.h).
std::string EssenceOfDocument(rapidjson::Document& doc, const std::vector<std::string>& ignored_paths);

// What changed between two essences, as a JSON array of
//   {"op": "add"|"change"|"remove", "path": ["spec","size"], "old": 1, "new": 2}
// ("old" is absent for add, "new" for remove). Either side may be "" (nothing).
Result<std::string> DiffEssences(const std::string& old_essence, const std::string& new_essence);

// A short stable digest of an essence, stored as the target a retrying handler works towards.
std::string EssenceDigest(const std::string& essence);

}  // namespace nodehook
