// LocalServer: a minimal HTTP/1.1 server on plain POSIX sockets for the agent's local
// endpoints. One thread runs a poll() loop over the listening sockets and every open
// connection, so a slow or silent client never blocks the others. Each connection carries one
// request and is closed after the answer (`Connection: close`).
//
// Addresses: IPv4, IPv6 (dual-stack for [::]) and host names; see listen_sockets.h.
// Bounds, so that no client can starve the probes:
//   - a request must arrive whole within `read_timeout` of accept (408 and close), however
//     slowly its bytes trickle in, and fit in `max_request_bytes` (413);
//   - per-peer and global connection caps that evict the oldest idle connection of the
//     heaviest peer instead of refusing newcomers (connection_limits.h).
// Malformed requests get 400; unknown paths 404; a known path with a method it does not
// accept 405 (with Allow).
//
// Handlers run on the server thread: they must be quick and must never block (render a
// snapshot, queue work for another thread).
// Thread-safety: Handle() before Start(); Start(), Stop() from one owner thread; port(),
// listening() after Start(); Poke() from any thread.
// Stop() (also run by the destructor) wakes the loop through a self-pipe and joins it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/status.h"
#include "agent/http/connection_limits.h"

namespace nodehook {

struct LocalRequest {
  std::string method;         // "GET", "POST", ...
  std::string path;           // "/healthz" (percent-decoding is left to handlers)
  std::string query;          // the part after '?', "" when absent
  std::string body;           // POST body (Content-Length only; chunked uploads are refused)
  std::string authorization;  // the Authorization header, "" when absent
};

struct LocalResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, e.g. Retry-After
};

using LocalHandler = std::function<LocalResponse(const LocalRequest&)>;

struct LocalServerOptions {
  std::string bind_address = "127.0.0.1";  // a host as in listen_sockets.h; "" = every interface
  int port = 0;                            // 0: the kernel chooses; see port()
  std::chrono::milliseconds read_timeout{2000};
  size_t max_request_bytes = 16 * 1024;
  ConnectionLimits limits;
  Clock* clock = nullptr;      // for request deadlines; the system clock when null
  Counter* evicted = nullptr;  // counts connections given up to make room, when set
};

class LocalServer {
 public:
  explicit LocalServer(LocalServerOptions options);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  // Routes `path` (exact match, query ignored) to `handler` for the listed methods. A path
  // ending in '/' also takes every path below it that has no route of its own.
  void Handle(std::string path, LocalHandler handler, std::vector<std::string> methods = {"GET"});

  // Binds, listens and starts the serving thread. kInvalid for an address that cannot be
  // resolved, kUnavailable when it cannot be bound (in use, no permission).
  Status Start();
  // The bound port (the kernel's choice when options.port was 0); 0 before Start().
  int port() const { return port_; }
  // What is listened on, e.g. {"[::]:8090 (dual-stack)"}; for logs.
  const std::vector<std::string>& listening() const { return listening_; }
  // Every bound address is loopback.
  bool loopback_only() const { return loopback_only_; }
  // Makes the loop look at its deadlines again now: after a fake clock moved.
  void Poke();
  // Closes the listeners and every connection and joins the thread. Idempotent.
  void Stop();

 private:
  struct Route {
    LocalHandler handler;
    std::vector<std::string> methods;
  };
  struct Connection;

  void Loop();
  void AcceptFrom(int listen_fd, std::vector<Connection>& connections);
  void ExpireDeadlines(std::vector<Connection>& connections);
  // Reads what is available; returns false when the connection is finished with.
  bool ReadFrom(Connection& c);
  bool WriteTo(Connection& c);
  void Answer(Connection& c, const LocalResponse& response);
  LocalResponse Dispatch(const LocalRequest& req);
  void Wake(char why);

  const LocalServerOptions options_;
  Clock& clock_;
  std::map<std::string, Route> routes_;  // written before Start(), then read-only
  std::vector<int> listen_fds_;
  std::vector<std::string> listening_;
  bool loopback_only_ = true;
  int wake_read_fd_ = -1;
  int wake_write_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace nodehook
