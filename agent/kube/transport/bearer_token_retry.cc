#include "agent/kube/transport/bearer_token_retry.h"

#include <algorithm>
#include <chrono>

#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/kube/transport/server_clock.h"

namespace nodehook {
namespace {

void LogRejected(const TransportConfig& config, LogLimiter& warnings, const HttpRequest& req, const char* detail) {
  int suppressed = 0;
  if (!warnings.Allow(&suppressed)) return;
  Log(LogLevel::kError, "API server rejected our credentials",
      {{"server", config.server}, {"request", req.method + " " + req.path_and_query}, {"status", 401},
       {"detail", detail}, {"suppressed", suppressed},
       {"next", "keep retrying with backoff; a fresh token is fetched after every 401"}});
}

}  // namespace

Result<HttpResponse> SendWithBearerToken(const TransportConfig& config, LogLimiter& rejected_warnings,
                                         const HttpRequest& req, const TokenAttempt& attempt) {
  Result<std::string> token = config.bearer_token ? config.bearer_token() : std::string();
  if (!token.ok()) return token.status();
  auto first = attempt(*token);
  if (!first.ok() || first->status != 401) return first;
  Result<std::string> fresh = config.reload_bearer_token ? config.reload_bearer_token(*token) : token;
  if (!fresh.ok()) return fresh.status();
  if (*fresh == *token) {
    LogRejected(config, rejected_warnings, req, "token unchanged after re-reading it");
    return first;
  }
  auto second = attempt(*fresh);
  if (second.ok() && second->status == 401) {
    LogRejected(config, rejected_warnings, req, "re-read token rejected too");
  }
  return second;
}

int ParseRetryAfter(const std::string& value) {
  if (value.empty()) return 0;
  int seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return 0;  // the HTTP-date form is not worth supporting
    seconds = std::min(seconds * 10 + (c - '0'), 24 * 3600);
  }
  return seconds;
}

void ObserveServerDate(const std::string& value) {
  int64_t server_ms = ParseHttpDate(value);
  if (server_ms < 0) return;
  int64_t local_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ApiServerClock().Observe(server_ms, local_ms);
}

}  // namespace nodehook
