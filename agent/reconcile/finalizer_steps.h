// FinalizerSteps: finalizer mode's side of a plan (plan.h), as the executor calls it. Chosen
// once per resource at start: FinalizerKeeper (finalizers/) for resources in finalizer mode,
// NoFinalizers for the rest, whose plans never hold these steps.
// Implementations are thread-safe.
#pragma once

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/kube_types.h"
#include "agent/object/object_facts.h"

namespace nodehook {

class FinalizerSteps {
 public:
  virtual ~FinalizerSteps() = default;
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
  Status Claim(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }
  Status Release(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }
  Status SweepDeparted(const WatchedResource&, const KubeObject&, const ObjectFacts&) override { return Refuse(); }

 private:
  static Status Refuse() { return InternalError("finalizer step planned for a resource without finalizer mode"); }
};

}  // namespace nodehook
