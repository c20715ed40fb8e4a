// The essence of an object: what a change must touch to count as an update. Like kopf, it is the
// whole object minus status, apiVersion/kind and bookkeeping metadata; labels and annotations stay.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

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

// A short stable digest of an essence, stored as the target a retrying handler works towards:
// 16 lowercase hex digits, the text of a 64-bit value (DigestText).
std::string EssenceDigest(const std::string& essence);
// A digest's text from its value, and back (false: `text` is not a digest), for holding one in
// 8 bytes where there is one per object.
std::string DigestText(uint64_t value);
bool ParseDigest(const std::string& text, uint64_t* value);

}  // namespace nodehook
