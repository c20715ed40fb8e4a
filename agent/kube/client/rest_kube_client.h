// RestKubeClient: KubeClient over an HttpTransport (JSON REST: list, watch, get, patch, create, replace).
// Owns its transport. Thread-safe as long as the transport is (HttpTransport promises it):
// the client itself keeps no mutable state, so several watches may run at once.
#pragma once

#include <memory>

#include "agent/base/metrics.h"
#include "agent/kube/transport/api_request_metrics.h"
#include "agent/kube/transport/http_transport.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

class RestKubeClient final : public KubeClient {
 public:
  // Objects beyond `limits` are quarantined in lists and watch events (see object_json.h).
  // Every request is counted and timed in `metrics` (ApiRequestMetrics); null = not recorded.
  explicit RestKubeClient(std::unique_ptr<HttpTransport> transport, ObjectLimits limits = {},
                          Metrics* metrics = nullptr);

  // The largest list page read; a larger one fails that list with kInvalid naming the cap.
  static constexpr size_t kMaxListBodyBytes = size_t{512} << 20;

  Result<ObjectList> List(const ResourceRef& r, const ListOptions& o) override;

  // A watch line longer than max(16 MiB, max_bytes + 64 KiB) fails the watch with kInvalid.
  // Cancellation: a per-call CancelToken is handed to the transport so a malformed line can
  // stop the stream without cancelling the caller's token. It is linked to `cancel` through
  // a weak reference; since CancelToken keeps callbacks until it fires, each call leaves one
  // small inert callback on `cancel` until then.
  Status Watch(const ResourceRef& r, const WatchOptions& o,
               const std::function<void(WatchEvent)>& on_event, const CancelToken& cancel) override;

  Result<KubeObject> Get(const ObjectRef& o) override;
  Status Patch(const ObjectRef& o, PatchType type, const std::string& body) override;
  Status Apply(const ObjectRef& o, const std::string& subresource, const std::string& field_manager,
               const std::string& body) override;
  Status Create(const ResourceRef& collection, const std::string& namespace_name, const std::string& body) override;
  Status CreateDryRun(const ResourceRef& collection, const std::string& namespace_name,
                      const std::string& body) override;
  Result<KubeObject> Replace(const ObjectRef& o, const std::string& body) override;
  Status Delete(const ObjectRef& o) override;
  Status PostTo(const ObjectRef& o, const std::string& body) override;

 private:
  // Sends `req` and parses the object in a 2xx answer; `verb` names the request in errors and metrics.
  Result<KubeObject> SendForObject(const char* verb, const ObjectRef& o, const HttpRequest& req);
  // POSTs `body` to the collection; `query` ("" or "?dryRun=All") follows its path.
  Status Post(const ResourceRef& collection, const std::string& namespace_name, const std::string& body,
              const std::string& query);

  std::unique_ptr<HttpTransport> transport_;
  const ObjectLimits limits_;
  const ApiRequestMetrics requests_;
};

}  // namespace nodehook
