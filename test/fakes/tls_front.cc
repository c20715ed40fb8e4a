#include "test/fakes/tls_front.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace nodehook {
namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "TlsFront: %s failed\n", what);
    std::abort();
  }
}

}  // namespace

TlsFront::TlsFront(int backend_port, const CertAndKey& server) : backend_port_(backend_port) {
  ctx_ = SSL_CTX_new(TLS_server_method());
  BIO* cert_bio = BIO_new_mem_buf(server.cert_pem.data(), static_cast<int>(server.cert_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO* key_bio = BIO_new_mem_buf(server.key_pem.data(), static_cast<int>(server.key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  Require(cert && key && SSL_CTX_use_certificate(ctx_, cert) == 1 && SSL_CTX_use_PrivateKey(ctx_, key) == 1,
          "loading the server certificate");
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cert_bio);
  BIO_free(key_bio);
  listener_ = std::make_unique<LoopbackListener>([this](LoopbackListener& listener, int fd) { Serve(listener, fd); });
}

TlsFront::~TlsFront() {
  listener_.reset();
  SSL_CTX_free(ctx_);
}

std::vector<std::string> TlsFront::server_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_names_;
}

void TlsFront::Serve(LoopbackListener& listener, int fd) {
  // SSL_write uses write(): a client that hung up must give EPIPE here, not kill the test binary.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  SSL* ssl = SSL_new(ctx_);
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) != 1) {
    ERR_clear_error();
    SSL_free(ssl);
    return;
  }
  const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    server_names_.emplace_back(sni ? sni : "");
  }
  int backend = ConnectTcp("127.0.0.1", backend_port_);
  if (backend >= 0) {
    listener.Track(backend);
    PumpSide tls;
    tls.fd = fd;
    tls.read = [ssl](char* data, size_t size) { return static_cast<ssize_t>(SSL_read(ssl, data, static_cast<int>(size))); };
    tls.write = [ssl](const char* data, size_t size) { return SSL_write(ssl, data, static_cast<int>(size)) > 0; };
    tls.buffered = [ssl] { return SSL_pending(ssl) > 0; };
    Pump(tls, SocketSide(backend));
    listener.Untrack(backend);
    ::close(backend);
  }
  SSL_shutdown(ssl);
  SSL_free(ssl);
  ERR_clear_error();
}

}  // namespace nodehook
