// The only file that includes cpprestsdk and boost: HttpTransport over web::http::client.
// Every cpprest/boost exception is caught here and returned as a Status.
//
// Timeouts: cpprest's http_client_config timeout restarts on every read, so it is used as the
// idle timeout (TransportConfig::idle_timeout_seconds). cpprest (2.10, asio) has no separate
// connect timeout: http_client_config offers only set_timeout, and the asio client starts that
// same timer before resolving and connecting. So a Stream() waits at most
// connect_timeout_seconds for its response headers (then cancels the request), and a Send()
// relies on the idle timeout.
// Credentials: after a 401 the token is reloaded and, if it changed, the request is sent once
// more. A CA that comes from a file is re-checked before every request and a changed one
// rebuilds the client. Rejected credentials are logged at most once a minute.
// Trust: cpprest loads the system store into every TLS context before our callback runs; a
// configured CA replaces that store, so it is the only one trusted (as with kubectl).
// tls-server-name: cpprest takes the SNI and verification name from the request's Host header
// when there is one (calc_cn_host in http_client_asio.cpp), so that header carries it. The API
// server does not route on Host.
// Proxies: only TransportConfig::proxy_url (cpprest sends CONNECT for https); proxies from the
// environment are ignored.
//
// Cancellation: each request gets its own pplx::cancellation_token_source, linked to the
// caller's CancelToken for the duration of the request (CancelRegistration) through a weak
// reference, so a callback that fires late touches nothing freed.
#include <cpprest/http_client.h>
#include <pplx/threadpool.h>

#include <boost/asio/ssl.hpp>
#include <algorithm>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/base/utc_time.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/transport/log_limiter.h"
#include "agent/kube/transport/server_clock.h"

namespace nodehook {
namespace {

namespace http = web::http;
using ChunkSink = std::function<void(std::string_view)>;

constexpr size_t kReadBufferBytes = 64 * 1024;

// cpprest's pool only runs asio completions and short continuations (callers block on their own
// threads), so one thread keeps up with every watch and request; its default of 40 threads cost
// about 7 MB of RSS (stacks and malloc arenas) for nothing. With two, each watch event was handed
// from the thread that polled the socket to the other through asio's scheduler (a futex wake
// and a context switch): 8 % of the agent's CPU per change at 100 changes/s.
constexpr size_t kIoThreads = 1;

// Must run before cpprest's first use, which would start the default pool.
void SizeIoThreadPool() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      crossplat::threadpool::initialize_with_threads(kIoThreads);
    } catch (const std::exception& e) {
      Log(LogLevel::kWarn, "HTTP thread pool already started",
          {{"error", e.what()}, {"next", "keep its size"}});
    }
  });
}

// Loads CA (as the only trust anchors), client certificate and key from memory. Returns the
// first failure.
Status ApplyTls(const TransportConfig& c, boost::asio::ssl::context& ctx) {
  boost::system::error_code ec;
  if (!c.ca_pem.empty()) {
    SSL_CTX_set_cert_store(ctx.native_handle(), X509_STORE_new());  // drops the system store
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

// Every answer's Date moves the process's view of the API server's clock (server_clock.h).
void ObserveServerDate(const http::http_headers& headers) {
  auto it = headers.find("Date");
  if (it == headers.end()) return;
  int64_t server_ms = ParseHttpDate(it->second);
  if (server_ms < 0) return;
  int64_t local_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ApiServerClock().Observe(server_ms, local_ms);
}

Status Cancelled() { return Status(StatusCode::kCancelled, "request cancelled"); }

// "http://user:password@host:port" -> a cpprest proxy with basic credentials; "" -> none.
// May throw web::uri_exception (caught by the caller).
web::web_proxy ProxyFor(const std::string& proxy_url) {
  if (proxy_url.empty()) return web::web_proxy(web::web_proxy::disabled);
  web::uri uri(proxy_url);
  // Without a port cpprest would use 8080; kubectl (Go) uses 80 for http://.
  int port = uri.port() > 0 ? uri.port() : 80;
  web::web_proxy proxy(web::uri_builder().set_scheme(uri.scheme()).set_host(uri.host()).set_port(port).to_uri());
  const std::string& userinfo = uri.user_info();
  if (!userinfo.empty()) {
    size_t colon = userinfo.find(':');
    std::string user = web::uri::decode(userinfo.substr(0, colon));
    std::string password = colon == std::string::npos ? "" : web::uri::decode(userinfo.substr(colon + 1));
    proxy.set_credentials(web::credentials(user, password));
  }
  return proxy;
}

// One cpprest client and the TLS material it was built with. Immutable once built.
struct ClientState {
  std::shared_ptr<http::client::http_client> client;
  Status error;  // why there is no usable client (bad PEM, bad server address)
};

ClientState BuildClient(const TransportConfig& config) {
  ClientState state;
  http::client::http_client_config cc;
  cc.set_timeout(std::chrono::seconds(std::max(1, config.idle_timeout_seconds)));
  cc.set_validate_certificates(!config.insecure_skip_tls_verify);
  try {
    cc.set_proxy(ProxyFor(config.proxy_url));
    // A bad PEM is found now and reported by every request, rather than thrown from
    // inside cpprest's connection setup.
    boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23);
    state.error = ApplyTls(config, probe);
    if (!state.error.ok()) return state;
    // The probe above already reported a bad PEM; here there is no one to report to.
    cc.set_ssl_context_callback([config](boost::asio::ssl::context& ctx) { (void)ApplyTls(config, ctx); });
    state.client = std::make_shared<http::client::http_client>(web::uri(config.server), cc);
  } catch (const std::exception& e) {
    state.error = InvalidError("server '" + config.server + "': " + e.what());
  }
  return state;
}

class CpprestTransport final : public HttpTransport {
 public:
  explicit CpprestTransport(TransportConfig config)
      : config_(std::move(config)),
        state_(std::make_shared<const ClientState>(BuildClient(config_))),
        ca_in_use_(config_.ca_pem),
        credential_warnings_(SystemClock::Instance()),
        ca_warnings_(SystemClock::Instance()) {}

  Result<HttpResponse> Send(const HttpRequest& req) override { return Execute(req, nullptr, nullptr); }

  Result<HttpResponse> Stream(const HttpRequest& req, const ChunkSink& on_chunk,
                              const CancelToken& cancel) override {
    return Execute(req, &on_chunk, &cancel);
  }

 private:
  // The client to use now: rebuilt first if the CA file changed since the last request.
  std::shared_ptr<const ClientState> CurrentClient() {
    std::string ca = config_.ca_pem_source ? config_.ca_pem_source() : std::string();
    MutexLock lock(&mu_);
    if (config_.ca_pem_source && ca != ca_in_use_) {
      ca_in_use_ = ca;
      TransportConfig changed = config_;
      changed.ca_pem = ca;
      auto rebuilt = std::make_shared<const ClientState>(BuildClient(changed));
      int suppressed = 0;
      if (rebuilt->error.ok()) {
        state_ = rebuilt;
        Log(LogLevel::kInfo, "CA bundle changed", {{"server", config_.server}, {"next", "new connections use it"}});
      } else if (ca_warnings_.Allow(&suppressed)) {
        Log(LogLevel::kError, "CA bundle changed but is unusable",
            {{"server", config_.server}, {"error", rebuilt->error.message()},
             {"suppressed", suppressed}, {"next", "keep the previous CA; check again on next request"}});
      }
    }
    return state_;
  }

  http::http_request BuildRequest(const HttpRequest& req, const std::string& token) const {
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
    if (!token.empty()) msg.headers().add("Authorization", "Bearer " + token);
    if (!config_.tls_server_name.empty()) msg.headers().add("Host", config_.tls_server_name);
    return msg;
  }

  // Reads the body as it arrives: wait for at least one byte, then take whatever else is
  // already buffered, so each piece is handed on without waiting for a full buffer.
  // Stops early, with Ok, once *full is set (a capped body has all it will take).
  static Status ReadBody(const http::http_response& response, const ChunkSink& sink,
                         const CancelToken* cancel, const bool* full) {
    auto buf = response.body().streambuf();
    std::vector<uint8_t> data(kReadBufferBytes);
    while (!*full) {
      if (cancel && cancel->cancelled()) return Cancelled();
      size_t want = std::clamp<size_t>(buf.in_avail(), 1, data.size());
      size_t n = buf.getn(data.data(), want).get();
      if (n == 0) return Status::Ok();
      sink(std::string_view(reinterpret_cast<const char*>(data.data()), n));
    }
    return Status::Ok();
  }

  Status FromException(const char* what, int error_value, const CancelToken* cancel) const {
    if (cancel && cancel->cancelled()) return Cancelled();
    std::string message = config_.server + ": " + what;
    if (error_value == static_cast<int>(std::errc::timed_out)) {
      return Status(StatusCode::kTimeout, std::move(message));
    }
    return UnavailableError(std::move(message));
  }

  Result<HttpResponse> Execute(const HttpRequest& req, const ChunkSink* on_chunk, const CancelToken* cancel) {
    Result<std::string> token = config_.bearer_token ? config_.bearer_token() : std::string();
    if (!token.ok()) return token.status();
    auto first = Attempt(req, *token, on_chunk, cancel);
    if (!first.ok() || first->status != 401) return first;
    Result<std::string> fresh = config_.reload_bearer_token ? config_.reload_bearer_token(*token) : token;
    if (!fresh.ok()) return fresh.status();
    if (*fresh == *token) {
      LogRejected(req, "token unchanged after re-reading it");
      return first;
    }
    auto second = Attempt(req, *fresh, on_chunk, cancel);
    if (second.ok() && second->status == 401) LogRejected(req, "re-read token rejected too");
    return second;
  }

  void LogRejected(const HttpRequest& req, const char* detail) {
    int suppressed = 0;
    if (!credential_warnings_.Allow(&suppressed)) return;
    Log(LogLevel::kError, "API server rejected our credentials",
        {{"server", config_.server}, {"request", req.method + " " + req.path_and_query}, {"status", 401},
         {"detail", detail}, {"suppressed", suppressed},
         {"next", "keep retrying with backoff; a fresh token is fetched after every 401"}});
  }

  // Waits for the response headers, at most connect_timeout_seconds for a Stream().
  Result<http::http_response> AwaitHeaders(const pplx::task<http::http_response>& task,
                                           pplx::cancellation_token_source& source, bool streaming) const {
    if (streaming && config_.connect_timeout_seconds > 0) {
      auto arrived = std::make_shared<std::promise<void>>();
      std::future<void> done = arrived->get_future();
      // pplx hands continuations their task by value.
      task.then([arrived](pplx::task<http::http_response> t) {  // NOLINT(performance-unnecessary-value-param)
        // Observe the outcome here too: after a timeout nobody else will, and pplx traps on
        // a task exception that was never observed.
        try {
          t.wait();
        } catch (...) {
        }
        arrived->set_value();
      });
      if (done.wait_for(std::chrono::seconds(config_.connect_timeout_seconds)) != std::future_status::ready) {
        source.cancel();
        // kUnavailable, not kTimeout: the server never answered, whereas kTimeout means an
        // answered stream went silent (which a quiet watch legitimately does).
        return Status(StatusCode::kUnavailable, config_.server + ": no response within the connect timeout of " +
                                                std::to_string(config_.connect_timeout_seconds) + "s");
      }
    }
    return task.get();
  }

  Result<HttpResponse> Attempt(const HttpRequest& req, const std::string& token, const ChunkSink* on_chunk,
                               const CancelToken* cancel) {
    std::shared_ptr<const ClientState> state = CurrentClient();
    if (!state->error.ok()) return state->error;
    auto source = std::make_shared<pplx::cancellation_token_source>();
    std::weak_ptr<pplx::cancellation_token_source> weak = source;
    std::optional<CancelRegistration> link;
    if (cancel) {
      link.emplace(*cancel, [weak] {
        if (auto s = weak.lock()) s->cancel();
      });
    }
    try {
      auto headers = AwaitHeaders(state->client->request(BuildRequest(req, token), source->get_token()), *source,
                                  on_chunk != nullptr);
      if (!headers.ok()) return headers.status();
      http::http_response& response = *headers;
      HttpResponse out;
      out.status = response.status_code();
      out.retry_after_seconds = ParseRetryAfter(response.headers());
      ObserveServerDate(response.headers());
      bool streaming = on_chunk && out.status >= 200 && out.status < 300;
      // A hostile or broken server must not make us hold an unbounded body.
      size_t cap = out.status >= 200 && out.status < 300 ? req.max_body_bytes : kMaxErrorBodyBytes;
      bool full = false;
      ChunkSink collect = [&](std::string_view piece) {
        if (cap > 0 && out.body.size() + piece.size() > cap) {
          out.body.append(piece.substr(0, cap - out.body.size()));
          full = true;
        } else {
          out.body.append(piece);
        }
      };
      if (streaming && req.on_stream_headers) req.on_stream_headers(out.status);
      Status read = ReadBody(response, streaming ? *on_chunk : collect, cancel, &full);
      if (!read.ok()) return read;
      if (full && out.status >= 200 && out.status < 300) {
        return InvalidError(config_.server + ": " + req.method + " " + req.path_and_query +
                            ": response body larger than " + std::to_string(cap) + " bytes");
      }
      return out;
    } catch (const http::http_exception& e) {
      return FromException(e.what(), e.error_code().value(), cancel);
    } catch (const pplx::task_canceled&) {
      return Cancelled();
    } catch (const std::exception& e) {
      return FromException(e.what(), 0, cancel);
    }
  }

  const TransportConfig config_;
  Mutex mu_;
  std::shared_ptr<const ClientState> state_ GUARDED_BY(mu_);  // replaced when the CA changes
  std::string ca_in_use_ GUARDED_BY(mu_);
  LogLimiter credential_warnings_;
  LogLimiter ca_warnings_;
};

}  // namespace

std::unique_ptr<HttpTransport> NewCpprestTransport(TransportConfig config) {
  SizeIoThreadPool();
  return std::make_unique<CpprestTransport>(std::move(config));
}

}  // namespace nodehook
