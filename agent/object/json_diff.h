// What changed between two JSON documents, as the array hooks read from NODEHOOK_DIFF_FILE:
//   [{"op": "add"|"change"|"remove", "path": ["spec","size"], "old": 1, "new": 2}, ...]
// Objects are compared key by key (a merge walk over both sides' sorted keys: O(n log n) for
// n keys, where a lookup per key was quadratic); anything else, arrays included, is compared
// whole. Changes come in depth-first order, keys sorted. Iterative, so any depth the parser
// accepted is safe on a worker's stack. Pure function; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace nodehook {

std::string DiffJson(const rapidjson::Value& old_value, const rapidjson::Value& new_value);

}  // namespace nodehook
