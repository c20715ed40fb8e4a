// LocalServer: a minimal HTTP/1.1 server on plain POSIX sockets for the agent's local
// endpoints (/healthz, /readyz, /metrics). One thread runs a poll() loop over the listening
// socket and every open connection, so a slow or silent client never blocks the others.
// Each connection carries one request and is closed after the answer (`Connection: close`).
//
// Bounds: a request must arrive whole within `read_timeout` and fit in `max_request_bytes`
// (else 408 / 413 and close); at most `max_connections` are open at once (more are closed
// at accept). Malformed requests get 400; unknown paths 404; a known path with a method it does
// not accept 405 (with Allow).
//
// Handlers run on the server thread: they must be quick and must not block (render a snapshot).
// Thread-safety: Handle() before Start(); Start(), Stop(), port() from any one owner thread.
// Stop() (also run by the destructor) wakes the loop through a self-pipe and joins it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct LocalRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // "/healthz" (percent-decoding is left to handlers)
  std::string query;   // the part after '?', "" when absent
  std::string body;    // POST body (Content-Length only; chunked uploads are refused)
};

struct LocalResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using LocalHandler = std::function<LocalResponse(const LocalRequest&)>;

struct LocalServerOptions {
  std::string bind_address = "127.0.0.1";  // IPv4 literal; "0.0.0.0" for every interface
  int port = 0;                            // 0: the kernel chooses; see port()
  std::chrono::milliseconds read_timeout{5000};
  size_t max_request_bytes = 64 * 1024;
  size_t max_connections = 32;
};

class LocalServer {
 public:
  explicit LocalServer(LocalServerOptions options);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  // Routes `path` (exact match, query ignored) to `handler` for the listed methods.
  void Handle(std::string path, LocalHandler handler, std::vector<std::string> methods = {"GET"});

  // Binds, listens and starts the serving thread. kInvalid for a bad address, kUnavailable
  // when the port cannot be bound (in use, no permission).
  Status Start();
  // The bound port (the kernel's choice when options.port was 0); 0 before Start().
  int port() const { return port_; }
  // Closes the listener and every connection and joins the thread. Idempotent.
  void Stop();

 private:
  struct Route {
    LocalHandler handler;
    std::vector<std::string> methods;
  };
  struct Connection;

  void Loop();
  // Reads what is available; returns false when the connection is finished with.
  bool ReadFrom(Connection& c);
  bool WriteTo(Connection& c);
  void Answer(Connection& c, int status, const std::string& content_type, const std::string& body,
              const std::string& extra_headers = "");
  void Dispatch(Connection& c, const LocalRequest& req);

  const LocalServerOptions options_;
  std::map<std::string, Route> routes_;  // written before Start(), then read-only
  int listen_fd_ = -1;
  int wake_read_fd_ = -1;
  int wake_write_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace nodehook
