// ConnectProxy: a tiny HTTP proxy on 127.0.0.1 that understands only CONNECT: it opens the
// requested host:port, answers 200 and copies bytes both ways. Anything else gets 405. It
// records every request line and Proxy-Authorization header, so a test can prove traffic went
// through it. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "test/fakes/loopback_listener.h"

namespace nodehook {

class ConnectProxy {
 public:
  ConnectProxy();
  ~ConnectProxy();

  int port() const { return listener_->port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::vector<std::string> request_lines() const;
  std::vector<std::string> authorizations() const;  // Proxy-Authorization values ("" when absent)

 private:
  void Serve(LoopbackListener& listener, int fd);

  mutable std::mutex mu_;
  std::vector<std::string> request_lines_;   // guarded by mu_
  std::vector<std::string> authorizations_;  // guarded by mu_
  std::unique_ptr<LoopbackListener> listener_;
};

}  // namespace nodehook
