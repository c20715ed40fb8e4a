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
  std::unique_ptr<HealthService> service(new HealthService(options, stale_after));
  Status listening = service->Listen();
  if (listening.code() == StatusCode::kInvalid) return listening;
  if (!listening.ok()) {
    Log(LogLevel::kWarn, "health endpoints not listening",
        {{"address", address}, {"error", listening.ToString()},
         {"next", "try again every 2s (another copy on this node may hold the port)"}});
    service->retry_thread_ = std::thread([s = service.get()] { s->KeepTrying(); });
  }
  return service;
}

Status HealthService::Listen() {
  auto server = std::make_unique<LocalServer>(options_);
  RegisterStandardEndpoints(*server, [this] { return Snapshot(); }, SystemClock::Instance(), HealthBounds{stale_after_},
                            DefaultMetrics());
  // An outside system calls back here when multi-step work it was waiting for has moved on.
  server->Handle(
      "/v1/retry", [this](const LocalRequest& req) { return Retry(req); }, {"POST"});
  NODEHOOK_RETURN_IF_ERROR(server->Start());
  Log(LogLevel::kInfo, "health endpoints listening",
      {{"address", options_.bind_address}, {"port", std::to_string(server->port())},
       {"next", "serve /healthz /readyz /metrics"}});
  std::lock_guard<std::mutex> lock(mu_);
  server_ = std::move(server);
  return Status::Ok();
}

void HealthService::KeepTrying() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (stop_cv_.wait_for(lock, std::chrono::seconds(2), [this] { return stopping_; })) return;
    lock.unlock();
    bool ok = Listen().ok();
    lock.lock();
    if (ok) return;
  }
}

int HealthService::port() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_ ? server_->port() : 0;
}

HealthService::~HealthService() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (retry_thread_.joinable()) retry_thread_.join();
  if (server_) server_->Stop();
}

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
