// FakeApiServer: a scriptable HTTP/1.1 server on 127.0.0.1 (kernel-chosen port) for running the
// real HTTP transport against injected faults: chunked bodies split anywhere, a connection
// dropped mid-body, a response that stalls, error statuses and headers.
// Each request takes the next scripted response (FIFO); with none left it gets a 500.
// Thread-safe: tests script and inspect from their thread while connection threads serve.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nodehook {

struct FakeResponse {
  enum class Ending {
    kComplete,        // terminating chunk (or full Content-Length body); connection kept alive
    kDropConnection,  // close the socket right after the last listed chunk
    kStall,           // send nothing more and keep the socket open until the server stops
  };

  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> chunks;  // each written as one HTTP chunk
  bool chunked = true;              // false: one body with Content-Length
  Ending ending = Ending::kComplete;
  std::chrono::milliseconds delay_between_chunks{0};  // a slow server, not test synchronisation
};

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The value of header `name` (lower-case), or "" when absent.
  std::string Header(const std::string& name) const;
};

class FakeApiServer {
 public:
  FakeApiServer();   // binds and starts serving; aborts the test binary if it cannot bind
  ~FakeApiServer();  // closes every connection (ending stalls) and joins all threads
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void Enqueue(FakeResponse response);
  std::vector<RecordedRequest> requests() const;
  // True once `n` requests have arrived; false if `timeout` passes first.
  bool WaitForRequests(size_t n, std::chrono::milliseconds timeout) const;

 private:
  void AcceptLoop();
  void Serve(int fd);
  bool Respond(int fd, const FakeResponse& response);  // false: connection must close
  FakeResponse NextResponse(const RecordedRequest& req);
  void StallUntilStopped();

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopping_ = false;                   // guarded by mu_
  std::vector<FakeResponse> script_;        // guarded by mu_; front is next
  std::vector<RecordedRequest> requests_;   // guarded by mu_
  std::set<int> open_fds_;                  // guarded by mu_
  std::vector<std::thread> connection_threads_;  // guarded by mu_
};

}  // namespace nodehook
