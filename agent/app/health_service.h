// HealthService: serves /healthz, /readyz and /metrics for the whole life of the process.
// Before the agent runs (for instance while a second copy waits for the state lock), liveness
// passes and readiness fails, saying what the process is waiting for.
// Owns its LocalServer; thread-safe (the server thread reads what the main thread attaches).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "agent/base/status.h"
#include "agent/core/agent.h"
#include "agent/http/local_server.h"

namespace nodehook {

class HealthService {
 public:
  // `address` is "HOST:PORT"; port 0 picks a free port.
  static Result<std::unique_ptr<HealthService>> Start(const std::string& address, Duration stale_after);
  ~HealthService();

  void SetWaiting(const std::string& what);
  void Attach(Agent* agent);
  void Detach();
  int port() const { return server_->port(); }

 private:
  explicit HealthService(std::unique_ptr<LocalServer> server) : server_(std::move(server)) {}
  std::vector<WatchHealth> Snapshot() const;
  LocalResponse Retry(const LocalRequest& req);

  std::unique_ptr<LocalServer> server_;
  mutable std::mutex mu_;
  Agent* agent_ = nullptr;             // guarded by mu_
  std::string waiting_ = "starting";  // guarded by mu_
};

// Splits "HOST:PORT" ("[::1]:8090" too); errors name what was expected.
Status ParseHostPort(const std::string& address, std::string* host, int* port);

}  // namespace nodehook
