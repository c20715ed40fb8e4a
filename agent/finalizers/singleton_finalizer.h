// SingletonFinalizer: the FinalizerSteps of a cluster-singleton resource. One finalizer for the
// whole cluster, kSingletonFinalizer ("nodehook.io/singleton"), not one per node:
//   Claim    the leader puts it on before the first hook of an object (create, update or the
//            adoption of what an earlier leader handled), so an object some leader started a
//            hook for cannot disappear before a leader has run its delete hook;
//   Release  the leader takes it off once the delete hook succeeded, with the handled annotation
//            in the same patch (so the DELETED event's object owes no second delete);
//   SweepDeparted  nothing: the finalizer belongs to whoever leads, never to a node.
// Guarantees: the knowledge that a delete is owed lives in the object's finalizer list, which
// outlives every agent, term, Lease and timer. Caveat: with no agent running (an uninstall), a
// deletion waits until someone removes the finalizer (docs/singleton.md says how).
// Edits are guarded like the per-node ones (finalizer_edit.h). Thread-safe; borrows the client.
#pragma once

#include <string>

#include "agent/kube/client/kube_client.h"
#include "agent/reconcile/finalizer_steps.h"

namespace nodehook {

class SingletonFinalizer final : public FinalizerSteps {
 public:
  explicit SingletonFinalizer(KubeClient& client);

  const std::string& Name() const override { return name_; }
  [[nodiscard]] Status Claim(const WatchedResource& resource, const KubeObject& object,
                             const ObjectFacts& facts) override;
  [[nodiscard]] Status Release(const WatchedResource& resource, const KubeObject& object,
                               const ObjectFacts& facts) override;
  [[nodiscard]] Status SweepDeparted(const WatchedResource&, const KubeObject&, const ObjectFacts&) override {
    return Status::Ok();
  }

 private:
  KubeClient& client_;
  const std::string name_;
};

}  // namespace nodehook
