// The token rules every HttpTransport shares (TransportConfig::bearer_token and
// reload_bearer_token): a request goes out with the token as it is now; after a 401 the token is
// re-read and, when it changed, the request is sent once more with the fresh one. Rejected
// credentials are logged at most once a minute (the caller's LogLimiter).
// Stateless apart from the limiter; thread-safe.
#pragma once

#include <functional>
#include <string>

#include "agent/base/status.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/transport/log_limiter.h"

namespace nodehook {

// One try of the request with `token` ("" = no Authorization header).
using TokenAttempt = std::function<Result<HttpResponse>(const std::string& token)>;

Result<HttpResponse> SendWithBearerToken(const TransportConfig& config, LogLimiter& rejected_warnings,
                                         const HttpRequest& req, const TokenAttempt& attempt);

// A response header's value: Retry-After in seconds (0 when absent or an HTTP-date, capped at a
// day); a Date moves the process's view of the API server's clock (server_clock.h).
int ParseRetryAfter(const std::string& value);
void ObserveServerDate(const std::string& value);

}  // namespace nodehook
