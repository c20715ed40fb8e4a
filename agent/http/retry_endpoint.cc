#include "agent/http/retry_endpoint.h"

#include <utility>

#include "agent/http/request_parser.h"

namespace nodehook {
namespace {

LocalResponse Text(int status, std::string body) {
  LocalResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Uids are UUIDs and handlers are reason names: anything else is refused before it reaches a log.
bool Plausible(const std::string& value, size_t max_length, bool allow_upper_and_digits) {
  if (value.empty() || value.size() > max_length) return false;
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || c == '-' ||
              (allow_upper_and_digits && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')));
    if (!ok) return false;
  }
  return true;
}

LocalResponse Retry(const LocalRequest& req, const RetrySink& sink, const BearerTokenFile* token) {
  if (token != nullptr && !token->Allows(req.authorization)) {
    LocalResponse denied = Text(401, "authentication required: send Authorization: Bearer <the token in admin_token_file>\n");
    denied.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"nodehook\"");
    return denied;
  }
  std::string uid = QueryParam(req.query, "uid");
  std::string handler = QueryParam(req.query, "handler");
  if (!Plausible(uid, 128, true)) return Text(400, "expected ?uid=UID[&handler=NAME] with a Kubernetes uid\n");
  if (!handler.empty() && !Plausible(handler, 32, false)) {
    return Text(400, "handler: expected a handler name such as create, update, delete, resume or event\n");
  }
  Status queued = sink(uid, handler);
  if (queued.code() == StatusCode::kTooManyRequests) {
    LocalResponse busy = Text(429, "too many retry requests queued; try again\n");
    busy.headers.emplace_back("Retry-After", "1");
    return busy;
  }
  if (queued.code() == StatusCode::kUnavailable) return Text(503, queued.message() + "\n");
  if (!queued.ok()) return Text(500, queued.ToString() + "\n");
  return Text(202, "retry of " + uid + (handler.empty() ? "" : " handler " + handler) +
                       " accepted; it runs if this node has pending or failed work for it (a permanent failure "
                       "runs once more)\n");
}

}  // namespace

void RegisterRetryEndpoint(LocalServer& server, RetrySink sink, const BearerTokenFile* token) {
  server.Handle("/v1/retry", [sink = std::move(sink), token](const LocalRequest& req) { return Retry(req, sink, token); },
                {"POST"});
}

}  // namespace nodehook
