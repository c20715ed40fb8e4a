// The only file that includes libcurl: watch streams read on the caller's own thread.
//
// Why: cpprest reads a response on its I/O thread and completes a task per read, which the
// watching thread waits for; each watch event was a hand-off between two threads (a futex wake
// and a context switch each way), about 0.2 ms of CPU per event at 100 events/s (docs/
// benchmarks.md). Here the watching thread polls its own socket (curl_multi_poll) and parses
// what arrives in the same call. Requests (Send) still go through cpprest: they are few.
//
// Each Stream() is one easy handle on its own connection (a watch lives for minutes; nothing
// to share). TLS material is handed over from memory (CURLOPT_*_BLOB): a configured CA is the
// only trust anchor (no CA path, no system store), as with kubectl and the cpprest transport.
// tls-server-name: the URL carries that name (SNI, verification, Host header) and
// CURLOPT_CONNECT_TO sends the connection to the server's real address. Proxies: only
// TransportConfig::proxy_url (an empty CURLOPT_PROXY keeps curl from reading the environment);
// https goes through it with CONNECT. Timeouts are kept here, not by curl: the response
// headers must arrive within connect_timeout_seconds (kUnavailable), and an answered stream
// silent for idle_timeout_seconds is a stall (kTimeout). Cancellation wakes the poll
// (curl_multi_wakeup) from the CancelToken's callback.
#include <curl/curl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/kube/transport/bearer_token_retry.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/transport/log_limiter.h"

namespace nodehook {
namespace {

using ChunkSink = std::function<void(std::string_view)>;
using Steady = std::chrono::steady_clock;

// curl_global_init is not thread-safe: once, before the first handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// True when `pem` holds at least one certificate OpenSSL can read.
bool HoldsCertificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return false;
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  bool ok = cert != nullptr;
  X509_free(cert);
  BIO_free(bio);
  return ok;
}

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// The handles of one request. Members are destroyed in reverse order: the easy handle leaves
// the multi handle before either is freed.
struct Handles {
  std::unique_ptr<CURLM, MultiDeleter> multi{curl_multi_init()};
  std::unique_ptr<CURL, EasyDeleter> easy{curl_easy_init()};
  std::unique_ptr<curl_slist, ListDeleter> headers;
  std::unique_ptr<curl_slist, ListDeleter> connect_to;
  std::array<char, CURL_ERROR_SIZE> error{};  // curl's own words for a failure
  bool added = false;
  ~Handles() {
    if (added) curl_multi_remove_handle(multi.get(), easy.get());
  }
};

// What one response has delivered so far. Touched only by the thread running Stream().
struct Exchange {
  const HttpRequest* req = nullptr;
  const ChunkSink* sink = nullptr;
  const CancelToken* cancel = nullptr;
  HttpResponse out;
  bool headers_done = false;
  bool streaming = false;  // a 2xx: the body goes to `sink`
  bool error_body_full = false;
  Steady::time_point last_byte;
};

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

std::string Trimmed(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  return std::string(value);
}

size_t OnHeaderLine(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  std::string_view line(data, size * count);
  x->last_byte = Steady::now();
  if (StartsWithNoCase(line, "http/")) {  // a status line: a new response (after a 1xx too)
    size_t space = line.find(' ');
    int status = 0;
    for (size_t i = space == std::string_view::npos ? line.size() : space + 1;
         i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
      status = status * 10 + (line[i] - '0');
    }
    x->out = HttpResponse{};
    x->out.status = status;
  } else if (line == "\r\n" || line == "\n") {
    if (x->out.status >= 200) {
      x->headers_done = true;
      x->streaming = x->sink != nullptr && x->out.status < 300;
      if (x->streaming && x->req->on_stream_headers) x->req->on_stream_headers(x->out.status);
    }
  } else if (StartsWithNoCase(line, "retry-after:")) {
    x->out.retry_after_seconds = ParseRetryAfter(Trimmed(line.substr(12)));
  } else if (StartsWithNoCase(line, "date:")) {
    ObserveServerDate(Trimmed(line.substr(5)));
  }
  return size * count;
}

// Returning less than it was given stops the transfer (CURLE_WRITE_ERROR).
size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  std::string_view piece(data, size * count);
  x->last_byte = Steady::now();
  if (x->cancel->cancelled()) return 0;  // the sink asked to stop (or the caller did)
  if (x->streaming) {
    (*x->sink)(piece);
    return piece.size();
  }
  // An error answer is kept whole up to a cap: a hostile server must not make us hold more.
  std::string& body = x->out.body;
  if (body.size() + piece.size() > kMaxErrorBodyBytes) {
    body.append(piece.substr(0, kMaxErrorBodyBytes - body.size()));
    x->error_body_full = true;
    return 0;
  }
  body.append(piece);
  return piece.size();
}

Status Cancelled() { return Status(StatusCode::kCancelled, "request cancelled"); }

class CurlStreamTransport final : public HttpTransport {
 public:
  CurlStreamTransport(TransportConfig config, std::unique_ptr<HttpTransport> sender)
      : config_(std::move(config)),
        sender_(std::move(sender)),
        ca_in_use_(config_.ca_pem),
        credential_warnings_(SystemClock::Instance()) {
    PrepareAddress();
    // The system store as OpenSSL (and so cpprest, and Go) finds it: SSL_CERT_FILE and
    // SSL_CERT_DIR when set, else OpenSSL's built-in paths; not curl's own compiled-in bundle.
    const char* file = std::getenv(X509_get_default_cert_file_env());
    const char* dir = std::getenv(X509_get_default_cert_dir_env());
    system_ca_file_ = file != nullptr ? file : X509_get_default_cert_file();
    system_ca_dir_ = dir != nullptr ? dir : X509_get_default_cert_dir();
  }

  Result<HttpResponse> Send(const HttpRequest& req) override { return sender_->Send(req); }

  Result<HttpResponse> Stream(const HttpRequest& req, const ChunkSink& on_chunk,
                              const CancelToken& cancel) override {
    if (!address_error_.ok()) return address_error_;
    return SendWithBearerToken(config_, credential_warnings_, req, [&](const std::string& token) {
      return Attempt(req, token, on_chunk, cancel);
    });
  }

 private:
  // The URL prefix and, for tls-server-name, where to really connect. Once, at construction.
  void PrepareAddress() {
    std::string server = config_.server;
    while (!server.empty() && server.back() == '/') server.pop_back();
    base_url_ = server;
    if (config_.tls_server_name.empty()) return;
    CURLU* url = curl_url();
    char* host = nullptr;
    char* port = nullptr;
    char* with_name = nullptr;
    if (curl_url_set(url, CURLUPART_URL, server.c_str(), 0) != CURLUE_OK ||
        curl_url_get(url, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(url, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_set(url, CURLUPART_HOST, config_.tls_server_name.c_str(), 0) != CURLUE_OK ||
        curl_url_get(url, CURLUPART_URL, &with_name, 0) != CURLUE_OK) {
      address_error_ = InvalidError("server '" + config_.server + "' with tls-server-name '" +
                                    config_.tls_server_name + "': not a valid URL");
    } else {
      base_url_ = with_name;
      while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
      connect_to_ = config_.tls_server_name + ":" + port + ":" + host + ":" + port;
    }
    curl_free(host);
    curl_free(port);
    curl_free(with_name);
    curl_url_cleanup(url);
  }

  // The CA to trust now: a changed file is taken once it holds a certificate (the cpprest
  // transport, which answers Send(), logs the change and an unusable file).
  std::string CurrentCa() {
    std::string ca = config_.ca_pem_source ? config_.ca_pem_source() : std::string();
    MutexLock lock(&mu_);
    if (config_.ca_pem_source && ca != ca_in_use_ && HoldsCertificate(ca)) ca_in_use_ = ca;
    return ca_in_use_;
  }

  // Sets every option of one request on `h`. False when curl refused one (out of memory, an
  // option this libcurl lacks).
  bool Configure(Handles& h, const HttpRequest& req, const std::string& token, const std::string& ca,
                 Exchange& x, const std::string& url) const {
    CURL* e = h.easy.get();
    bool ok = true;
    auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
    set(curl_easy_setopt(e, CURLOPT_URL, url.c_str()));
    set(curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L));
    set(curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)));
    set(curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https"));
    if (req.method != "GET") set(curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req.method.c_str()));
    if (!req.body.empty()) {
      set(curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size())));
      set(curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, req.body.c_str()));
    }
    curl_slist* list = nullptr;
    bool has_content_type = false;
    for (const auto& [key, value] : req.headers) {
      has_content_type = has_content_type || key == "Content-Type";
      list = curl_slist_append(list, (key + ": " + value).c_str());
    }
    if (!req.body.empty() && !has_content_type) list = curl_slist_append(list, "Content-Type: application/json");
    if (!token.empty()) list = curl_slist_append(list, ("Authorization: Bearer " + token).c_str());
    list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
    h.headers.reset(list);
    set(curl_easy_setopt(e, CURLOPT_HTTPHEADER, list));
    if (!connect_to_.empty()) {
      h.connect_to.reset(curl_slist_append(nullptr, connect_to_.c_str()));
      set(curl_easy_setopt(e, CURLOPT_CONNECT_TO, h.connect_to.get()));
    }
    set(curl_easy_setopt(e, CURLOPT_PROXY, config_.proxy_url.c_str()));  // "": none, not the environment
    set(curl_easy_setopt(e, CURLOPT_PROXYPORT, 80L));                    // as kubectl, not curl's 1080
    set(curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L));
    set(curl_easy_setopt(e, CURLOPT_HTTPPROXYTUNNEL, base_url_.rfind("https:", 0) == 0 ? 1L : 0L));
    const long verify = config_.insecure_skip_tls_verify ? 0L : 1L;
    set(curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, verify));
    set(curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, verify * 2));
    if (!ca.empty()) {
      curl_blob blob{const_cast<char*>(ca.data()), ca.size(), CURL_BLOB_COPY};
      set(curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob));
      set(curl_easy_setopt(e, CURLOPT_CAINFO, nullptr));
      set(curl_easy_setopt(e, CURLOPT_CAPATH, nullptr));
    } else {
      set(curl_easy_setopt(e, CURLOPT_CAINFO, system_ca_file_.c_str()));
      set(curl_easy_setopt(e, CURLOPT_CAPATH, system_ca_dir_.c_str()));
    }
    if (!config_.client_cert_pem.empty()) {
      curl_blob blob{const_cast<char*>(config_.client_cert_pem.data()), config_.client_cert_pem.size(),
                     CURL_BLOB_COPY};
      set(curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob));
      set(curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM"));
    }
    if (!config_.client_key_pem.empty()) {
      curl_blob blob{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                     CURL_BLOB_COPY};
      set(curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob));
      set(curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM"));
    }
    set(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeaderLine));
    set(curl_easy_setopt(e, CURLOPT_HEADERDATA, &x));
    set(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnBody));
    set(curl_easy_setopt(e, CURLOPT_WRITEDATA, &x));
    set(curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h.error.data()));
    return ok;
  }

  Result<HttpResponse> Attempt(const HttpRequest& req, const std::string& token, const ChunkSink& on_chunk,
                               const CancelToken& cancel) {
    Handles h;
    if (!h.multi || !h.easy) return UnavailableError(config_.server + ": libcurl could not start a request");
    Exchange x;
    x.req = &req;
    x.sink = &on_chunk;
    x.cancel = &cancel;
    const std::string url = base_url_ + req.path_and_query;
    if (!Configure(h, req, token, CurrentCa(), x, url)) {
      return InvalidError(config_.server + ": libcurl refused an option: " + h.error.data());
    }
    if (curl_multi_add_handle(h.multi.get(), h.easy.get()) != CURLM_OK) {
      return UnavailableError(config_.server + ": libcurl could not start a request");
    }
    h.added = true;
    CURLM* multi = h.multi.get();
    CancelRegistration wake(cancel, [multi] { curl_multi_wakeup(multi); });

    const Steady::time_point start = Steady::now();
    x.last_byte = start;
    const auto connect_timeout = std::chrono::seconds(config_.connect_timeout_seconds);
    const auto idle_timeout = std::chrono::seconds(std::max(1, config_.idle_timeout_seconds));
    while (true) {
      if (cancel.cancelled()) return Cancelled();
      int running = 0;
      if (curl_multi_perform(multi, &running) != CURLM_OK) {
        return UnavailableError(config_.server + ": libcurl failed to drive the request");
      }
      if (running == 0) break;
      const Steady::time_point now = Steady::now();
      // Before the headers, both limits apply (the idle one as with cpprest, which counts
      // connecting too); after them, only the idle one.
      Steady::time_point deadline = x.last_byte + idle_timeout;
      if (!x.headers_done && config_.connect_timeout_seconds > 0) {
        if (now >= start + connect_timeout) {
          // kUnavailable, not kTimeout: the server never answered, whereas kTimeout means an
          // answered stream went silent (which a quiet watch legitimately does).
          return Status(StatusCode::kUnavailable, config_.server + ": no response within the connect timeout of " +
                                                      std::to_string(config_.connect_timeout_seconds) + "s");
        }
        deadline = std::min(deadline, start + connect_timeout);
      }
      if (now >= x.last_byte + idle_timeout) {
        return Status(StatusCode::kTimeout, config_.server + ": no data for " +
                                                std::to_string(config_.idle_timeout_seconds) + "s");
      }
      long curl_wait = 0;
      curl_multi_timeout(multi, &curl_wait);  // -1: curl has no timer of its own
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1);
      if (curl_wait >= 0) wait = std::min(wait, std::chrono::milliseconds(curl_wait));
      if (curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait.count()), nullptr) != CURLM_OK) {
        return UnavailableError(config_.server + ": libcurl failed to wait for the server");
      }
    }
    int left = 0;
    CURLMsg* msg = curl_multi_info_read(multi, &left);
    CURLcode result = msg != nullptr && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_OK;
    if (cancel.cancelled()) return Cancelled();
    if (result == CURLE_OK || (result == CURLE_WRITE_ERROR && x.error_body_full)) {
      if (x.streaming) x.out.body.clear();
      return std::move(x.out);
    }
    return FromCurl(result, h.error.data());
  }

  Status FromCurl(CURLcode result, const char* detail) const {
    std::string message = config_.server + ": " + (detail[0] != '\0' ? detail : curl_easy_strerror(result));
    switch (result) {
      case CURLE_OPERATION_TIMEDOUT:
        return Status(StatusCode::kTimeout, std::move(message));
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_SSL_CERTPROBLEM:
      case CURLE_SSL_CACERT_BADFILE:
        return InvalidError(std::move(message));
      default:
        return UnavailableError(std::move(message));
    }
  }

  const TransportConfig config_;
  const std::unique_ptr<HttpTransport> sender_;
  std::string base_url_;     // scheme://host[:port][/prefix], the host being tls-server-name if set
  std::string connect_to_;   // "name:port:host:port" for tls-server-name, else ""
  Status address_error_;
  std::string system_ca_file_;  // trusted when no CA is configured
  std::string system_ca_dir_;
  Mutex mu_;
  std::string ca_in_use_ GUARDED_BY(mu_);
  LogLimiter credential_warnings_;
};

}  // namespace

std::unique_ptr<HttpTransport> NewTransport(TransportConfig config) {
  InitCurlOnce();
  auto sender = NewCpprestTransport(config);
  return std::make_unique<CurlStreamTransport>(std::move(config), std::move(sender));
}

}  // namespace nodehook
