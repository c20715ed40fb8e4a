// POST /v1/retry?uid=UID[&handler=NAME]: an outside system says multi-step work it was waiting
// for has moved on. The request is only queued (`sink` must return at once and never touch the
// state store); the agent's housekeeping thread applies it, rate-limited per object
// (agent/queue/retry_inbox.h). Answers:
//   202  queued; said for any well-formed uid, so the answer never tells whether the uid has
//        pending work on this node (the log says what happened);
//   401  with `token` set, a missing or wrong bearer token, before the query is even looked at;
//   400  no uid, or a uid/handler with characters a Kubernetes uid or handler name cannot have;
//   429  the queue is full (Retry-After: 1);   503  the agent is not running yet.
// `token` may be null (loopback-only listener, see HealthService) and must outlive the server.
#pragma once

#include <functional>
#include <string>

#include "agent/base/status.h"
#include "agent/http/bearer_token.h"
#include "agent/http/local_server.h"

namespace nodehook {

// Ok: queued. kTooManyRequests: the queue is full. kUnavailable: not accepting yet.
using RetrySink = std::function<Status(const std::string& uid, const std::string& handler)>;

void RegisterRetryEndpoint(LocalServer& server, RetrySink sink, const BearerTokenFile* token);

}  // namespace nodehook
