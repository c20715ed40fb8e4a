// TlsFront: TLS termination on 127.0.0.1 in front of a plain-HTTP backend (a FakeApiServer),
// so the real transport can be tested over TLS with every fake-server feature. It records the
// SNI name of every handshake. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "test/fakes/loopback_listener.h"
#include "test/fakes/test_pki.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace nodehook {

class TlsFront {
 public:
  // Serves `server` (certificate and key) and forwards to 127.0.0.1:backend_port.
  TlsFront(int backend_port, const CertAndKey& server);
  ~TlsFront();

  int port() const { return listener_->port(); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port()); }
  // The SNI name sent in each completed handshake ("" when none was sent), in order.
  std::vector<std::string> server_names() const;

 private:
  void Serve(LoopbackListener& listener, int fd);

  int backend_port_;
  SSL_CTX* ctx_ = nullptr;
  mutable std::mutex mu_;
  std::vector<std::string> server_names_;  // guarded by mu_
  std::unique_ptr<LoopbackListener> listener_;  // last: stopped first
};

}  // namespace nodehook
