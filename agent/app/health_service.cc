#include "agent/app/health_service.h"

#include "agent/base/host_port.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/http/endpoints.h"
#include "agent/http/objects_endpoint.h"
#include "agent/http/retry_endpoint.h"

namespace nodehook {

Result<LocalServerOptions> ServerOptions(const std::string& knob, const std::string& address, const std::string& listener) {
  auto where = ParseHostPort(knob, address);
  if (!where.ok()) return where.status();
  LocalServerOptions options;
  options.bind_address = where->host;
  options.port = where->port;
  options.evicted = &DefaultMetrics().GetCounter(
      "http_connections_evicted_total", "idle local HTTP connections closed to make room for new ones",
      {{"listener", listener}});
  return options;
}

Status CheckAdminExposure(bool loopback_only, bool has_token) {
  if (loopback_only || has_token) return Status::Ok();
  return InvalidError(
      "admin_address: POST /v1/retry changes what hooks do and would be reachable from the network "
      "without authentication; bind it to loopback (127.0.0.1:8091, [::1]:8091, localhost:8091) "
      "or set admin_token_file");
}

Result<std::unique_ptr<HealthService>> HealthService::Start(const LocalEndpointsConfig& config) {
  std::unique_ptr<HealthService> service(new HealthService());
  HealthService* self = service.get();
  if (!config.health_address.empty()) {
    auto options = ServerOptions("health_address", config.health_address, "probe");
    if (!options.ok()) return options.status();
    HealthBounds bounds{config.stale_after};
    const std::string objects = config.objects_endpoint;
    auto probe = KeptServer::Start("health endpoints", config.health_address, *options, [self, bounds, objects](LocalServer& s) {
      RegisterStandardEndpoints(s, [self] { return self->Snapshot(); }, SystemClock::Instance(), bounds,
                                DefaultMetrics(), [self] { return self->ReadinessProblems(); });
      if (objects == "off") return;
      ObjectsEndpointOptions view;
      view.show_messages = objects != "no_messages";
      RegisterObjectsEndpoints(s, [self] { return self->ObjectViews(); }, SystemClock::Instance(), view);
    });
    if (!probe.ok()) return Status(probe.status().code(), "health_address: " + probe.status().message());
    service->probe_ = std::move(probe).value();
  }
  if (!config.admin_address.empty()) {
    auto options = ServerOptions("admin_address", config.admin_address, "admin");
    if (!options.ok()) return options.status();
    if (!config.admin_token_file.empty()) {
      service->token_ = std::make_unique<BearerTokenFile>(config.admin_token_file);
      if (auto token = service->token_->Read(); !token.ok()) return token.status();
    }
    const BearerTokenFile* token = service->token_.get();
    auto admin = KeptServer::Start(
        "admin endpoint", config.admin_address, *options,
        [self, token](LocalServer& s) {
          RegisterRetryEndpoint(s, [self](const std::string& uid, const std::string& handler) {
            return self->Retry(uid, handler);
          }, token);
        },
        [token](const LocalServer& s) { return CheckAdminExposure(s.loopback_only(), token != nullptr); });
    if (!admin.ok()) return Status(admin.status().code(), "admin_address: " + admin.status().message());
    service->admin_ = std::move(admin).value();
  }
  return service;
}

HealthService::~HealthService() {
  admin_.reset();
  probe_.reset();
}

int HealthService::port() const { return probe_ ? probe_->port() : 0; }
int HealthService::admin_port() const { return admin_ ? admin_->port() : 0; }

void HealthService::SetWaiting(const std::string& what) {
  MutexLock lock(&mu_);
  waiting_ = what;
}

void HealthService::Attach(Agent* agent, std::function<std::string()> readiness_problem) {
  MutexLock lock(&mu_);
  agent_ = agent;
  readiness_problem_ = std::move(readiness_problem);
}

void HealthService::Detach() { Attach(nullptr); }

// mu_ is held only for RetryNow's map update: no store write ever happens under it.
Status HealthService::Retry(const std::string& uid, const std::string& handler) {
  MutexLock lock(&mu_);
  if (!agent_) return UnavailableError("not running yet: " + waiting_);
  return agent_->RetryNow(uid, handler);
}

// Only a shared pointer is copied under mu_: the snapshot was read by the housekeeping thread.
Result<ObjectViewsPtr> HealthService::ObjectViews() const {
  MutexLock lock(&mu_);
  if (!agent_) return UnavailableError("not running yet: " + waiting_);
  return agent_->ObjectViews();
}

std::vector<std::string> HealthService::ReadinessProblems() const {
  MutexLock lock(&mu_);
  if (!readiness_problem_) return {};
  std::string problem = readiness_problem_();
  if (problem.empty()) return {};
  return {problem};
}

std::vector<WatchHealth> HealthService::Snapshot() const {
  MutexLock lock(&mu_);
  if (agent_) return agent_->HealthSnapshot();
  // Not acting yet: alive, not ready.
  return {WatchHealth{waiting_, false, SystemClock::Instance().Now(), 0, "waiting"}};
}

}  // namespace nodehook
