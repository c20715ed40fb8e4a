// KeptServer: a LocalServer that keeps trying to listen. When its port is taken (a second
// copy of the agent on a host-network node, during a rolling update) it logs once and tries
// again every 2 s on its own thread instead of failing the start.
// `setup` registers the routes on each new LocalServer; `verify` (optional) vets what was bound
// (e.g. "loopback only") and a failure there is final. Logs "<name> listening" with the address
// and port once serving.
// Thread-safety: port() from any thread; destruction stops the retry thread and the server.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "agent/base/mutex.h"
#include "agent/base/status.h"
#include "agent/http/local_server.h"

namespace nodehook {

class KeptServer {
 public:
  using Setup = std::function<void(LocalServer&)>;
  using Verify = std::function<Status(const LocalServer&)>;

  // kInvalid for an address that cannot be resolved or fails `verify`; being unable to bind
  // is retried in the background.
  static Result<std::unique_ptr<KeptServer>> Start(std::string name, std::string address, LocalServerOptions options,
                                                   Setup setup, Verify verify = nullptr);
  ~KeptServer();
  KeptServer(const KeptServer&) = delete;
  KeptServer& operator=(const KeptServer&) = delete;

  // The port listened on; 0 while the address is still taken.
  int port() const;

 private:
  KeptServer(std::string name, std::string address, LocalServerOptions options, Setup setup, Verify verify);
  Status Listen();
  void KeepTrying();

  const std::string name_;
  const std::string address_;  // as configured, for logs
  const LocalServerOptions options_;
  const Setup setup_;
  const Verify verify_;
  mutable Mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::unique_ptr<LocalServer> server_ GUARDED_BY(mu_);
  std::thread retry_thread_;
};

}  // namespace nodehook
