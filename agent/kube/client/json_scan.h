// A validating JSON scanner that builds nothing: it checks that a text is exactly one JSON value
// (RFC 8259) and returns, for an object or array, the exact byte span of each direct member or
// element together with that value's nesting depth. One pass, no recursion (the open brackets
// are a byte string on the heap), so hostile nesting cannot overflow the stack.
//
// It lets the client find a watch event's `object` and a list's `items` without parsing them,
// measure each object's depth from its own top-level bracket (as the API server does), and hand
// hooks the original bytes. Keys are compared as raw bytes between their quotes (escapes are not
// decoded; the API server never escapes plain ASCII keys).
// Pure functions; thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct JsonPart {
  std::string_view key;    // objects: the raw key between its quotes; "" for array elements
  std::string_view value;  // the value's exact bytes
  int depth = 0;           // the value's nesting: 0 for a scalar, 1 for {} or [1,2], 2 for {"a":[]}
};

struct JsonScan {
  char kind = 0;  // '{', '[', or 0 for a scalar
  int depth = 0;  // nesting of the whole value, counted like JsonPart::depth
  std::vector<JsonPart> parts;  // members of the object or elements of the array, in order

  // The first member with this raw key, or null.
  const JsonPart* Find(std::string_view key) const;
};

// kInvalid "malformed JSON at offset N: expected ..." when `text` is not exactly one JSON value
// (whitespace around it is allowed).
Result<JsonScan> ScanJson(std::string_view text);

}  // namespace nodehook
