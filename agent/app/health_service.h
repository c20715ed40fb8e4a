// HealthService: serves /healthz, /readyz and /metrics for the whole life of the process.
// Before the agent runs (for instance while a second copy waits for the state lock), liveness
// passes and readiness fails, saying what the process is waiting for. When the port is taken
// (a second copy on a host-network node), it keeps trying every 2 s instead of failing the start.
// Owns its LocalServer; thread-safe (the server thread reads what the main thread attaches).
#pragma once

#include <memory>
#include <mutex>
#include <condition_variable>
#include <string>
#include <thread>

#include "agent/base/status.h"
#include "agent/core/agent.h"
#include "agent/http/local_server.h"

namespace nodehook {

class HealthService {
 public:
  // `address` is "HOST:PORT"; port 0 picks a free port. Fails only for a malformed address.
  static Result<std::unique_ptr<HealthService>> Start(const std::string& address, Duration stale_after);
  ~HealthService();
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;

  void SetWaiting(const std::string& what);
  void Attach(Agent* agent);
  void Detach();
  // The port listened on; 0 while the address is still taken.
  int port() const;

 private:
  HealthService(LocalServerOptions options, Duration stale_after) : options_(std::move(options)), stale_after_(stale_after) {}
  // One attempt to listen, with every route registered.
  Status Listen();
  void KeepTrying();
  std::vector<WatchHealth> Snapshot() const;
  LocalResponse Retry(const LocalRequest& req);

  const LocalServerOptions options_;
  const Duration stale_after_;
  std::thread retry_thread_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;                  // guarded by mu_
  std::unique_ptr<LocalServer> server_;    // guarded by mu_ while retry_thread_ runs
  mutable std::mutex mu_;
  Agent* agent_ = nullptr;             // guarded by mu_
  std::string waiting_ = "starting";  // guarded by mu_
};

// Splits "HOST:PORT" ("[::1]:8090" too); errors name what was expected.
Status ParseHostPort(const std::string& address, std::string* host, int* port);

}  // namespace nodehook
