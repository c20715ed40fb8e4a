// Parses one HTTP/1.x request from the bytes received so far. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "agent/http/local_server.h"

namespace nodehook {

enum class ParseOutcome {
  kIncomplete,  // need more bytes
  kComplete,    // *out holds the request
  kMalformed,   // 400
  kTooLarge,    // 413: head or body exceeds the limit
  kNeedLength,  // 411: a body without Content-Length (chunked uploads are not supported)
};

ParseOutcome ParseHttpRequest(std::string_view data, size_t max_bytes, LocalRequest* out);

// The value of `key` in a query string such as "uid=abc&handler=delete" ("" when absent).
// Values are returned as sent: the callers' values (uids, names, numbers) need no decoding.
std::string QueryParam(const std::string& query, const std::string& key);

}  // namespace nodehook
