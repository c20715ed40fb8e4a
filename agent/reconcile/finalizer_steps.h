// FinalizerSteps: finalizer mode's side of a plan (plan.h), as the executor calls it. Chosen
// once per resource at start: FinalizerKeeper (finalizers/) for resources in finalizer mode,
// SingletonFinalizer for cluster-singleton resources, NoFinalizers for the rest, whose plans
// never hold these steps. The reconciler plans finalizer steps exactly when Name() is not "".
// Implementations are thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"

namespace nodehook {

class FinalizerSteps {
 public:
  virtual ~FinalizerSteps() = default;
  // The finalizer this resource keeps on its objects; "" = none (no finalizer mode).
  virtual const std::string& Name() const = 0;
  // Ok when this node's finalizer is on the object (now or already).
  [[nodiscard]] virtual Status Claim(const WatchedResource& resource, const KubeObject& object,
                                     const ObjectFacts& facts) = 0;
  // Ok when this node's finalizer is off the object (now or already), or the object is gone.
  [[nodiscard]] virtual Status Release(const WatchedResource& resource, const KubeObject& object,
                                       const ObjectFacts& facts) = 0;
  // Ok when no departed node's finalizer is left on a deleting object.
  [[nodiscard]] virtual Status SweepDeparted(const WatchedResource& resource, const KubeObject& object,
                                             const ObjectFacts& facts) = 0;
};

// For resources without finalizer mode: Decide never plans these steps for them, so reaching
// one is a bug, reported as an error rather than acted on.
class NoFinalizers final : public FinalizerSteps {
 public:
  const std::string& Name() const override { return none_; }
  Status Claim(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }
  Status Release(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }
  Status SweepDeparted(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }

 private:
  static Status Refuse() { return InternalError("finalizer step planned for a resource without finalizer mode"); }
  const std::string none_;
};

}  // namespace nodehook
