// HealthService: the agent's two local listeners, for the whole life of the process.
//
//   probe listener (health_address, default ":8090", every interface, IPv6 dual-stack):
//     GET /healthz, /readyz, /metrics, and (unless objects_endpoint is "off") GET /v1/objects,
//     this node's per-object progress (objects_endpoint.h) for `kubectl nodehook`. Read-only,
//     so it may face the network (kubelet probes, metrics scrapers, the API server's pod
//     proxy); its LocalServer evicts idle connections per peer so no client can starve the
//     probes.
//   admin listener (admin_address, default "127.0.0.1:8091"): POST /v1/retry, the only
//     mutating endpoint. Loopback by default, so only processes in the pod (or on the node,
//     with hostNetwork) reach it. Bound anywhere else it needs admin_token_file (a bearer token,
//     bearer_token.h); without one the start is refused. Retry requests are only queued here
//     (Agent::RetryNow), never written to the state store on the HTTP thread.
//
// Before the agent runs (a second copy waiting for the state lock) liveness passes, readiness
// fails saying what the process waits for, and /v1/retry answers 503. A taken port is retried
// every 2 s (KeptServer). Owns both servers; thread-safe (the server threads read what the main
// thread attaches).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "agent/base/mutex.h"
#include "agent/base/status.h"
#include "agent/pipeline/agent.h"
#include "agent/http/bearer_token.h"
#include "agent/http/kept_server.h"

namespace nodehook {

struct LocalEndpointsConfig {
  std::string health_address;    // HOST:PORT; "" = off
  std::string admin_address;     // HOST:PORT; "" = off
  std::string admin_token_file;  // "" = no token (allowed on loopback only)
  Duration stale_after = std::chrono::seconds(150);
  std::string objects_endpoint = "on";  // "on", "no_messages" (hook output left out) or "off"
};

class HealthService {
 public:
  // Fails (kInvalid, with the knob named) for a malformed or unresolvable address, an unusable
  // token file, or an admin listener that would be reachable from the network without a token.
  static Result<std::unique_ptr<HealthService>> Start(const LocalEndpointsConfig& config);
  ~HealthService();
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;

  void SetWaiting(const std::string& what);
  // Probes judge `agent` from now on; `readiness_problem` ("" = none, e.g.
  // StoreHealth::ReadinessProblem) also fails /readyz. Both must stay valid until Detach().
  void Attach(Agent* agent, std::function<std::string()> readiness_problem = nullptr);
  void Detach();
  // The ports listened on; 0 while an address is still taken or the listener is off.
  int port() const;
  int admin_port() const;

 private:
  HealthService() = default;
  std::vector<WatchHealth> Snapshot() const;
  std::vector<std::string> ReadinessProblems() const;
  Status Retry(const std::string& uid, const std::string& handler);
  Result<ObjectViewsPtr> ObjectViews() const;

  std::unique_ptr<BearerTokenFile> token_;  // null: no authentication (loopback only)
  mutable Mutex mu_;
  Agent* agent_ GUARDED_BY(mu_) = nullptr;
  std::function<std::string()> readiness_problem_ GUARDED_BY(mu_);
  std::string waiting_ GUARDED_BY(mu_) = "starting";
  // Last, so they stop (joining their threads) before what their handlers use goes away.
  std::unique_ptr<KeptServer> probe_;
  std::unique_ptr<KeptServer> admin_;
};

// A listener's options from its knob (named in errors) and HOST:PORT; `listener` labels the
// count of connections it evicts.
Result<LocalServerOptions> ServerOptions(const std::string& knob, const std::string& address, const std::string& listener);

// The admin listener may face the network only with a token; the error says how to fix it.
Status CheckAdminExposure(bool loopback_only, bool has_token);

}  // namespace nodehook
