// The only file that includes cpprestsdk and boost: HttpTransport over web::http::client.
// Every cpprest/boost exception is caught here and returned as a Status.
//
// Timeouts: cpprest's http_client_config timeout restarts on every read, so it is used as the
// idle timeout (TransportConfig::idle_timeout_seconds). cpprest has no separate connect
// timeout, so the idle timeout bounds connecting too; connect_timeout_seconds is unused.
// Proxies from the environment are ignored: the API server is reached directly.
//
// Cancellation: each request gets its own pplx::cancellation_token_source, linked to the
// caller's CancelToken for the duration of the request (CancelRegistration) through a weak
// reference, so a callback that fires late touches nothing freed.
#include <cpprest/http_client.h>

#include <boost/asio/ssl.hpp>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "agent/kube/http_transport.h"

namespace nodehook {
namespace {

namespace http = web::http;
using ChunkSink = std::function<void(std::string_view)>;

constexpr size_t kReadBufferBytes = 64 * 1024;

// Loads CA, client certificate and key from memory. Returns the first failure.
Status ApplyTls(const TransportConfig& c, boost::asio::ssl::context& ctx) {
  boost::system::error_code ec;
  if (!c.ca_pem.empty()) {
    ctx.add_certificate_authority(boost::asio::buffer(c.ca_pem), ec);
    if (ec) return InvalidError("TLS: certificate authority: " + ec.message());
  }
  if (!c.client_cert_pem.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(c.client_cert_pem), ec);
    if (ec) return InvalidError("TLS: client certificate: " + ec.message());
  }
  if (!c.client_key_pem.empty()) {
    ctx.use_private_key(boost::asio::buffer(c.client_key_pem), boost::asio::ssl::context::pem, ec);
    if (ec) return InvalidError("TLS: client key: " + ec.message());
  }
  return Status::Ok();
}

int ParseRetryAfter(const http::http_headers& headers) {
  auto it = headers.find("Retry-After");
  if (it == headers.end()) return 0;
  int seconds = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') return 0;  // the HTTP-date form is not worth supporting
    seconds = std::min(seconds * 10 + (c - '0'), 24 * 3600);
  }
  return seconds;
}

Status Cancelled() { return Status(StatusCode::kCancelled, "request cancelled"); }

class CpprestTransport final : public HttpTransport {
 public:
  explicit CpprestTransport(TransportConfig config) : config_(std::move(config)) {
    http::client::http_client_config cc;
    cc.set_timeout(std::chrono::seconds(std::max(1, config_.idle_timeout_seconds)));
    cc.set_validate_certificates(!config_.insecure_skip_tls_verify);
    cc.set_proxy(web::web_proxy(web::web_proxy::disabled));
    try {
      // A bad PEM is found now and reported by every request, rather than thrown from
      // inside cpprest's connection setup.
      boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23);
      config_error_ = ApplyTls(config_, probe);
      const TransportConfig& tls = config_;
      cc.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) { ApplyTls(tls, ctx); });
      client_ = std::make_unique<http::client::http_client>(web::uri(config_.server), cc);
    } catch (const std::exception& e) {
      config_error_ = InvalidError("server '" + config_.server + "': " + e.what());
    }
  }

  Result<HttpResponse> Send(const HttpRequest& req) override { return Execute(req, nullptr, nullptr); }

  Result<HttpResponse> Stream(const HttpRequest& req, const ChunkSink& on_chunk,
                              const CancelToken& cancel) override {
    return Execute(req, &on_chunk, &cancel);
  }

 private:
  http::http_request BuildRequest(const HttpRequest& req) const {
    http::http_request msg(req.method);
    msg.set_request_uri(web::uri(req.path_and_query));
    std::string content_type = "application/json";
    for (const auto& [key, value] : req.headers) {
      if (key == "Content-Type") {
        content_type = value;
      } else {
        msg.headers().add(key, value);
      }
    }
    if (!req.body.empty()) msg.set_body(req.body, content_type);
    if (config_.bearer_token) {
      std::string token = config_.bearer_token();
      if (!token.empty()) msg.headers().add("Authorization", "Bearer " + token);
    }
    return msg;
  }

  // Reads the body as it arrives: wait for at least one byte, then take whatever else is
  // already buffered, so each piece is handed on without waiting for a full buffer.
  static Status ReadBody(const http::http_response& response, const ChunkSink& sink,
                         const CancelToken* cancel) {
    auto buf = response.body().streambuf();
    std::vector<uint8_t> data(kReadBufferBytes);
    while (true) {
      if (cancel && cancel->cancelled()) return Cancelled();
      size_t want = std::clamp<size_t>(buf.in_avail(), 1, data.size());
      size_t n = buf.getn(data.data(), want).get();
      if (n == 0) return Status::Ok();
      sink(std::string_view(reinterpret_cast<const char*>(data.data()), n));
    }
  }

  Status FromException(const char* what, int error_value, const CancelToken* cancel) const {
    if (cancel && cancel->cancelled()) return Cancelled();
    std::string message = config_.server + ": " + what;
    if (error_value == static_cast<int>(std::errc::timed_out)) {
      return Status(StatusCode::kTimeout, std::move(message));
    }
    return UnavailableError(std::move(message));
  }

  Result<HttpResponse> Execute(const HttpRequest& req, const ChunkSink* on_chunk,
                               const CancelToken* cancel) {
    if (!config_error_.ok()) return config_error_;
    auto source = std::make_shared<pplx::cancellation_token_source>();
    std::weak_ptr<pplx::cancellation_token_source> weak = source;
    std::optional<CancelRegistration> link;
    if (cancel) {
      link.emplace(*cancel, [weak] {
        if (auto s = weak.lock()) s->cancel();
      });
    }
    try {
      http::http_response response = client_->request(BuildRequest(req), source->get_token()).get();
      HttpResponse out;
      out.status = response.status_code();
      out.retry_after_seconds = ParseRetryAfter(response.headers());
      bool streaming = on_chunk && out.status >= 200 && out.status < 300;
      ChunkSink collect = [&out](std::string_view piece) { out.body.append(piece); };
      Status read = ReadBody(response, streaming ? *on_chunk : collect, cancel);
      if (!read.ok()) return read;
      return out;
    } catch (const http::http_exception& e) {
      return FromException(e.what(), e.error_code().value(), cancel);
    } catch (const pplx::task_canceled&) {
      return Cancelled();
    } catch (const std::exception& e) {
      return FromException(e.what(), 0, cancel);
    }
  }

  TransportConfig config_;
  Status config_error_;  // set once in the constructor; then read-only
  std::unique_ptr<http::client::http_client> client_;  // thread-safe; shared by all requests
};

}  // namespace

std::unique_ptr<HttpTransport> NewCpprestTransport(TransportConfig config) {
  return std::make_unique<CpprestTransport>(std::move(config));
}

}  // namespace nodehook
