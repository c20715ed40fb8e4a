#include "agent/kube/client/api_errors.h"

#include <string>

#include "agent/kube/client/object_json.h"

namespace nodehook {
namespace {

constexpr size_t kMaxSnippetBytes = 200;

StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 401: return StatusCode::kUnauthorized;
    case 403: return StatusCode::kForbidden;
    case 404: return StatusCode::kNotFound;
    case 408: return StatusCode::kTimeout;
    case 409: return StatusCode::kConflict;
    case 410: return StatusCode::kGone;
    case 429: return StatusCode::kTooManyRequests;
    default: break;
  }
  if (status >= 500 && status < 600) return StatusCode::kUnavailable;
  if (status >= 400 && status < 500) return StatusCode::kInvalid;
  return StatusCode::kInternal;
}

// The server explains errors in a Status body; proxies in between may send anything else.
std::string Explanation(const std::string& body) {
  auto api_status = ParseApiStatus(body);
  if (api_status.ok() && !api_status->message.empty()) {
    // The causes the message does not already spell out (a 422's message lists its own).
    std::string out = api_status->message, extra;
    for (const std::string& cause : api_status->causes) {
      if (cause.empty() || out.find(cause) != std::string::npos || extra.find(cause) != std::string::npos) continue;
      extra += (extra.empty() ? "" : "; ") + cause;
    }
    return extra.empty() ? out : out + " (" + extra + ")";
  }
  if (body.size() <= kMaxSnippetBytes) return body;
  return body.substr(0, kMaxSnippetBytes) + "...";
}

}  // namespace

Status ErrorFromResponse(const HttpResponse& resp, std::string_view context) {
  StatusCode code = CodeForHttpStatus(resp.status);
  std::string message = std::string(context) + ": HTTP " + std::to_string(resp.status);
  std::string explanation = Explanation(resp.body);
  if (!explanation.empty()) message += ": " + explanation;
  Status st(code, std::move(message));
  if (code == StatusCode::kTooManyRequests || code == StatusCode::kUnavailable) {
    st.set_retry_after_seconds(resp.retry_after_seconds);
  }
  return st;
}

}  // namespace nodehook
