#include "agent/base/status.h"

namespace nodehook {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalid: return "invalid";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kConflict: return "conflict";
    case StatusCode::kGone: return "gone";
    case StatusCode::kUnauthorized: return "unauthorized";
    case StatusCode::kForbidden: return "forbidden";
    case StatusCode::kTooManyRequests: return "too_many_requests";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kTimeout: return "timeout";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kCorrupt: return "corrupt";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace nodehook
