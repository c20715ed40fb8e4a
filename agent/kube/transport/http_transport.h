// HttpTransport: raw HTTP(S) to one API server. Exactly one implementation file includes
// cpprestsdk (cpprest_transport.cc): the upstream was archived in 2026 and may be swapped
// for libcurl without touching anything else. Implementations are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/status.h"

namespace nodehook {

struct HttpRequest {
  std::string method = "GET";
  std::string path_and_query;  // "/apis/example.com/v1/widgets?limit=500"
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Send() only: a larger 2xx body fails with kInvalid naming the cap; 0 = no cap. Error bodies
  // (non-2xx) are always cut to kMaxErrorBodyBytes, which is plenty for a metav1.Status.
  size_t max_body_bytes = 0;
  // Stream() only: called with the status once a 2xx response's headers are in, before the
  // first chunk (so a watch's latency is measured to its headers, not to the stream's end).
  std::function<void(int status)> on_stream_headers;
};

constexpr size_t kMaxErrorBodyBytes = 64 << 10;

struct HttpResponse {
  int status = 0;
  std::string body;
  int retry_after_seconds = 0;  // parsed Retry-After header, 0 when absent
};

// Where and how to connect. Credentials are read through callbacks so rotated token files
// and renewed certificates are picked up without rebuilding the transport.
struct TransportConfig {
  std::string server;  // "https://127.0.0.1:6443"
  // Trusted CAs. Given: ONLY these verify the server (the system store is not consulted, as
  // with kubectl). Empty: the system trust store.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  // The name sent as SNI and checked against the server's certificate instead of the server
  // address's host (kubeconfig tls-server-name). Empty: the host.
  std::string tls_server_name;
  // "http://[user:password@]host:port": an HTTP proxy, tunnelled through with CONNECT for
  // https servers (kubeconfig proxy-url). Empty: connect directly.
  std::string proxy_url;
  // The token to send, asked before every request; may be empty. An error (an exec plugin
  // failed) fails the request with it instead of sending it without credentials.
  std::function<Result<std::string>()> bearer_token;
  // Called after a 401 with the token that was rejected; returns a fresh token (re-read file,
  // re-run exec plugin). When it differs, the request is sent once more with it (Send, and
  // Stream before any body byte: a 401 never has a streamed body). May be empty.
  std::function<Result<std::string>(const std::string& rejected)> reload_bearer_token;
  // The CA bundle as it is now, when it comes from a file that may be replaced; may be empty.
  // Asked before every request; when it differs from the PEM in use, the TLS client is rebuilt
  // with it (requests already running keep the old one). An unusable new PEM is logged (at most
  // once a minute) and the previous client is kept.
  std::function<std::string()> ca_pem_source;
  // Stream() only: the longest wait for the response headers, which covers DNS, TCP connect,
  // TLS handshake and the server's first answer (a watch's headers come at once). cpprest has no
  // separate connect timeout (http_client_config::set_timeout restarts on every read and covers
  // connecting too), so for Send() connecting is bounded by idle_timeout_seconds. 0 = no limit.
  // Exceeding it is kUnavailable: the server never answered.
  int connect_timeout_seconds = 10;
  // Longest silence tolerated on an open response before it is treated as a stall (kTimeout).
  // This is also what detects a host that silently drops packets during a Send().
  int idle_timeout_seconds = 330;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;

  // A complete request/response. Transport failures (refused, TLS, DNS, reset, timeout) are
  // returned as kUnavailable/kTimeout; any HTTP status is returned as a response, not an error.
  // A 401 answered after the token reload and retry (see TransportConfig) is returned as well;
  // the transport logs rejected credentials at most once a minute.
  virtual Result<HttpResponse> Send(const HttpRequest& req) = 0;

  // For watches: a 2xx body is handed to `on_chunk` piece by piece as it arrives (chunk
  // boundaries are arbitrary) and the returned response has an empty body; a non-2xx
  // response is returned whole. Returns kCancelled if `cancel` fired.
  virtual Result<HttpResponse> Stream(const HttpRequest& req,
                                      const std::function<void(std::string_view chunk)>& on_chunk,
                                      const CancelToken& cancel) = 0;
};

std::unique_ptr<HttpTransport> NewCpprestTransport(TransportConfig config);

}  // namespace nodehook
