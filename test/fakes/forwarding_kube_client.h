// ForwardingKubeClient: passes every call to another client it does not own. Lends a fake to
// code that takes ownership of its client (and destroys it), and is the base of test clients
// that change one call and pass the rest on.
// Thread-safe as far as the inner client is.
#pragma once

#include "agent/kube/client/kube_client.h"

namespace nodehook {

class ForwardingKubeClient : public KubeClient {
 public:
  explicit ForwardingKubeClient(KubeClient& inner) : inner_(inner) {}

  Result<ObjectList> List(const ResourceRef& r, const ListOptions& o) override { return inner_.List(r, o); }
  Status Watch(const ResourceRef& r, const WatchOptions& o, const std::function<void(WatchEvent)>& on_event,
               const CancelToken& cancel) override {
    return inner_.Watch(r, o, on_event, cancel);
  }
  Result<KubeObject> Get(const ObjectRef& o) override { return inner_.Get(o); }
  Status Patch(const ObjectRef& o, PatchType type, const std::string& body) override {
    return inner_.Patch(o, type, body);
  }
  Status Create(const ResourceRef& collection, const std::string& namespace_name, const std::string& body) override {
    return inner_.Create(collection, namespace_name, body);
  }
  Status CreateDryRun(const ResourceRef& collection, const std::string& namespace_name,
                      const std::string& body) override {
    return inner_.CreateDryRun(collection, namespace_name, body);
  }
  Result<KubeObject> Replace(const ObjectRef& o, const std::string& body) override { return inner_.Replace(o, body); }
  Status Delete(const ObjectRef& o) override { return inner_.Delete(o); }
  Status PostTo(const ObjectRef& o, const std::string& body) override { return inner_.PostTo(o, body); }

 protected:
  KubeClient& inner_;
};

}  // namespace nodehook
