#include "agent/app/health_service.h"

#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/http/endpoints.h"
#include "agent/http/request_parser.h"

namespace nodehook {

Status ParseHostPort(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return InvalidError("health_address \"" + address + "\": expected HOST:PORT, e.g. 0.0.0.0:8090");
  }
  *host = address.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  try {
    size_t used = 0;
    *port = std::stoi(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1 || *port < 0 || *port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return InvalidError("health_address \"" + address + "\": expected a port number 0-65535 after the colon");
  }
  return Status::Ok();
}

Result<std::unique_ptr<HealthService>> HealthService::Start(const std::string& address, Duration stale_after) {
  LocalServerOptions options;
  NODEHOOK_RETURN_IF_ERROR(ParseHostPort(address, &options.bind_address, &options.port));
  std::unique_ptr<HealthService> service(new HealthService(std::make_unique<LocalServer>(options)));
  HealthService* self = service.get();
  RegisterStandardEndpoints(*service->server_, [self] { return self->Snapshot(); }, SystemClock::Instance(),
                            HealthBounds{stale_after}, DefaultMetrics());
  // An outside system calls back here when multi-step work it was waiting for has moved on.
  service->server_->Handle(
      "/v1/retry", [self](const LocalRequest& req) { return self->Retry(req); }, {"POST"});
  NODEHOOK_RETURN_IF_ERROR(service->server_->Start());
  Log(LogLevel::kInfo, "health endpoints listening",
      {{"address", options.bind_address}, {"port", std::to_string(service->port())},
       {"next", "serve /healthz /readyz /metrics"}});
  return service;
}

HealthService::~HealthService() { server_->Stop(); }

void HealthService::SetWaiting(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  waiting_ = what;
}

void HealthService::Attach(Agent* agent) {
  std::lock_guard<std::mutex> lock(mu_);
  agent_ = agent;
}

void HealthService::Detach() { Attach(nullptr); }


LocalResponse HealthService::Retry(const LocalRequest& req) {
  std::string uid = QueryParam(req.query, "uid");
  if (uid.empty()) return LocalResponse{400, "text/plain; charset=utf-8", "expected ?uid=UID[&handler=NAME]\n"};
  std::lock_guard<std::mutex> lock(mu_);
  if (!agent_) return LocalResponse{503, "text/plain; charset=utf-8", "not running yet: " + waiting_ + "\n"};
  Status st = agent_->RetryNow(uid, QueryParam(req.query, "handler"));
  if (st.code() == StatusCode::kNotFound) return LocalResponse{404, "text/plain; charset=utf-8", st.message() + "\n"};
  if (!st.ok()) return LocalResponse{500, "text/plain; charset=utf-8", st.ToString() + "\n"};
  return LocalResponse{202, "text/plain; charset=utf-8", "retry of " + uid + " queued\n"};
}

std::vector<WatchHealth> HealthService::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (agent_) return agent_->HealthSnapshot();
  // Not acting yet: alive, not ready.
  return {WatchHealth{waiting_, false, SystemClock::Instance().Now(), 0, "waiting"}};
}

}  // namespace nodehook
