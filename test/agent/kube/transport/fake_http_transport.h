// FakeHttpTransport: an in-memory HttpTransport for RestKubeClient tests. Responses are queued
// up front; every request is recorded. Stream() hands out the scripted chunks one by one and
// stops as soon as the request's CancelToken fires. Not thread-safe: one test thread only.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "agent/kube/transport/http_transport.h"

namespace nodehook {

struct ScriptedResponse {
  Status transport_error;  // non-ok: returned instead of a response
  HttpResponse response;
  std::vector<std::string> chunks;  // Stream(): body pieces for a 2xx response
};

class FakeHttpTransport final : public HttpTransport {
 public:
  void Push(ScriptedResponse r) { script_.push_back(std::move(r)); }
  void PushResponse(int status, std::string body, int retry_after = 0) {
    ScriptedResponse r;
    r.response.status = status;
    r.response.body = std::move(body);
    r.response.retry_after_seconds = retry_after;
    Push(std::move(r));
  }
  void PushStream(std::vector<std::string> chunks) {
    ScriptedResponse r;
    r.response.status = 200;
    r.chunks = std::move(chunks);
    Push(std::move(r));
  }

  const std::vector<HttpRequest>& requests() const { return requests_; }
  size_t chunks_delivered() const { return chunks_delivered_; }

  Result<HttpResponse> Send(const HttpRequest& req) override {
    ScriptedResponse r = Next(req);
    if (!r.transport_error.ok()) return r.transport_error;
    return r.response;
  }

  Result<HttpResponse> Stream(const HttpRequest& req,
                              const std::function<void(std::string_view)>& on_chunk,
                              const CancelToken& cancel) override {
    ScriptedResponse r = Next(req);
    if (!r.transport_error.ok()) return r.transport_error;
    if (r.response.status < 200 || r.response.status >= 300) return r.response;
    if (req.on_stream_headers) req.on_stream_headers(r.response.status);
    for (const auto& chunk : r.chunks) {
      if (cancel.cancelled()) return Status(StatusCode::kCancelled, "stream cancelled");
      on_chunk(chunk);
      ++chunks_delivered_;
    }
    return r.response;
  }

 private:
  ScriptedResponse Next(const HttpRequest& req) {
    requests_.push_back(req);
    if (script_.empty()) {
      ScriptedResponse r;
      r.transport_error = InternalError("fake transport: no scripted response");
      return r;
    }
    ScriptedResponse r = std::move(script_.front());
    script_.pop_front();
    return r;
  }

  std::deque<ScriptedResponse> script_;
  std::vector<HttpRequest> requests_;
  size_t chunks_delivered_ = 0;
};

}  // namespace nodehook
