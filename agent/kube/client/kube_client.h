// KubeClient: the agent's view of the Kubernetes API. The only seam that knows HTTP;
// everything above it speaks ResourceRef, KubeObject and Status.
// Implementations must be safe to call from several threads at once (one watch per thread).
#pragma once

#include <functional>

#include "agent/base/cancel.h"
#include "agent/base/status.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  // One page of a list. HTTP 410 (expired continue token) comes back as StatusCode::kGone.
  virtual Result<ObjectList> List(const ResourceRef& r, const ListOptions& o) = 0;

  // Streams events until the server ends the watch (returns Ok), an error occurs, or `cancel`
  // fires (returns kCancelled). An in-stream ERROR event is delivered to `on_event`;
  // an HTTP 410 response returns kGone. Malformed lines return kInvalid after logging them.
  virtual Status Watch(const ResourceRef& r, const WatchOptions& o,
                       const std::function<void(WatchEvent)>& on_event, const CancelToken& cancel) = 0;

  virtual Result<KubeObject> Get(const ObjectRef& o) = 0;
  virtual Status Patch(const ObjectRef& o, PatchType type, const std::string& body) = 0;
  // POSTs `body` (a whole object as JSON) to the collection, in `namespace_name` if not "".
  virtual Status Create(const ResourceRef& collection, const std::string& namespace_name, const std::string& body) {
    (void)collection, (void)namespace_name, (void)body;
    return Status(StatusCode::kInternal, "Create is not supported by this client");
  }
  // POSTs `body` to the object's subresource (o.subresource, e.g. a pod's "eviction").
  virtual Status PostTo(const ObjectRef& o, const std::string& body) {
    (void)o, (void)body;
    return Status(StatusCode::kInternal, "PostTo is not supported by this client");
  }
  // The same with ?dryRun=All: admission and validation run, nothing is stored.
  virtual Status CreateDryRun(const ResourceRef& collection, const std::string& namespace_name,
                              const std::string& body) {
    (void)collection, (void)namespace_name, (void)body;
    return Status(StatusCode::kInternal, "CreateDryRun is not supported by this client");
  }
  // DELETEs the object with background propagation (the garbage collector then deletes its
  // dependents, as `kubectl delete` does). kNotFound when it is already gone.
  virtual Status Delete(const ObjectRef& o) {
    (void)o;
    return Status(StatusCode::kInternal, "Delete is not supported by this client");
  }
  // Server-side apply: PATCHes `body` (a partial object as JSON, with apiVersion and kind) as
  // application/apply-patch+yaml to the object, or to its `subresource` ("status"; "" = the object
  // itself), as `field_manager`, with force: the fields it names become this manager's, and
  // fields it owned but no longer names are removed (unless another manager owns them too).
  virtual Status Apply(const ObjectRef& o, const std::string& subresource, const std::string& field_manager,
                       const std::string& body) {
    (void)o, (void)subresource, (void)field_manager, (void)body;
    return Status(StatusCode::kInternal, "Apply is not supported by this client");
  }
  // PUTs `body` (a whole object; its metadata.resourceVersion makes a stale write fail with
  // kConflict) and returns the object as stored.
  virtual Result<KubeObject> Replace(const ObjectRef& o, const std::string& body) {
    (void)o, (void)body;
    return Status(StatusCode::kInternal, "Replace is not supported by this client");
  }
};

// Lists every page (limit + continue) and returns all items with the final resourceVersion.
// A 410 on a continued page (an expired continue token) falls back to one list without limit,
// as client-go's pager does (FullListIfExpired), logged at warn ("list continue token expired").
Result<ObjectList> ListAll(KubeClient& client, const ResourceRef& r, int page_size = 500);

}  // namespace nodehook
