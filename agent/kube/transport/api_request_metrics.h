// ApiRequestMetrics: every request to the API server, as client-go's rest_client_requests_total
// and rest_client_request_duration_seconds count them:
//   nodehook_api_requests_total{verb,resource,code}        code: the HTTP status, or "error" when
//                                                          no response came (refused, TLS, timeout)
//   nodehook_api_request_duration_seconds{verb,resource}   histogram; for a watch, the time to its
//                                                          response headers, not the stream's life
// verb is list, watch, get, patch or create; resource is ResourceRef::Id().
// A null registry turns every call into a no-op. Thread-safe; a Request belongs to one thread.
#pragma once

#include <chrono>
#include <string>

#include "agent/base/metrics.h"

namespace nodehook {

class ApiRequestMetrics {
 public:
  explicit ApiRequestMetrics(Metrics* metrics) : metrics_(metrics) {}

  // One request, timed from its construction. The first Answered()/Failed() records it; later
  // calls are ignored, so a watch records at its headers and not again when the stream ends.
  class Request {
   public:
    Request(Metrics* metrics, const char* verb, std::string resource);
    void Answered(int http_status) { Record(std::to_string(http_status)); }
    void Failed() { Record("error"); }

   private:
    void Record(const std::string& code);

    Metrics* const metrics_;
    const char* const verb_;
    const std::string resource_;
    const std::chrono::steady_clock::time_point start_;
    bool recorded_ = false;
  };

  Request Start(const char* verb, std::string resource) const { return Request(metrics_, verb, std::move(resource)); }

 private:
  Metrics* const metrics_;
};

}  // namespace nodehook
