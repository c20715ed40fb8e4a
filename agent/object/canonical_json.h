// Canonical JSON: object keys sorted bytewise, no whitespace. Used for essences, so equal
// essences mean "nothing to do", and for the values a diff reports.
// Iterative (an explicit stack on the heap), so any depth the parser accepted is safe on a
// worker's stack. Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

namespace nodehook {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Parse flags for every document that feeds a comparison: heap instead of stack for nesting,
// and numbers exactly as written (the default parse rounds some 17-digit floats).
constexpr unsigned kExactParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag;

// The members of `object`, sorted by key bytes (the canonical order).
std::vector<const rapidjson::Value::Member*> SortedMembers(const rapidjson::Value& object);

// Writes `value` canonically into `writer`.
void WriteCanonical(const rapidjson::Value& value, JsonWriter& writer);

std::string CanonicalJson(const rapidjson::Value& value);

}  // namespace nodehook
