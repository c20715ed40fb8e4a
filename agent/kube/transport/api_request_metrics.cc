#include "agent/kube/transport/api_request_metrics.h"

namespace nodehook {

// Measured with the monotonic clock: this is how long the caller waited, whatever the wall
// clock (or an injected one) does meanwhile.
ApiRequestMetrics::Request::Request(Metrics* metrics, const char* verb, std::string resource)
    : metrics_(metrics), verb_(verb), resource_(std::move(resource)), start_(std::chrono::steady_clock::now()) {}

void ApiRequestMetrics::Request::Record(const std::string& code) {
  if (recorded_ || !metrics_) return;
  recorded_ = true;
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
  metrics_
      ->GetCounter("api_requests_total", "Requests to the API server by verb, resource and HTTP status "
                                         "(\"error\": no response: refused, TLS, timeout)",
                   {{"verb", verb_}, {"resource", resource_}, {"code", code}})
      .Increment();
  metrics_
      ->GetHistogram("api_request_duration_seconds",
                     "Latency of API requests until the response (a watch: until its headers)",
                     {{"verb", verb_}, {"resource", resource_}})
      .Observe(took.count());
}

}  // namespace nodehook
