// Maps a non-2xx HTTP response from the API server to a Status, carrying the server's own
// explanation (the metav1.Status message) and Retry-After. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"

namespace nodehook {

inline bool IsHttpSuccess(int status) { return status >= 200 && status < 300; }

// 401 kUnauthorized, 403 kForbidden, 404 kNotFound, 409 kConflict, 410 kGone,
// 429 kTooManyRequests and 5xx kUnavailable (both with retry_after_seconds), 408 kTimeout,
// other 4xx kInvalid, anything else kInternal. The message reads
// "<context>: HTTP <code>: <server message or body snippet>".
Status ErrorFromResponse(const HttpResponse& resp, std::string_view context);

}  // namespace nodehook
