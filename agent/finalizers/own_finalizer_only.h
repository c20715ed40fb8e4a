// OwnFinalizerOnly: finalizer mode for an agent that leaves departed nodes' finalizers to the
// steward (tuning.cross_node_writes "steward", docs/security.md). It claims and releases its own
// node's finalizer through the keeper it wraps, and never touches another node's: the node-bound
// admission rules would refuse that, and the steward, which judges departures, removes them.
// Thread-safe as the keeper it borrows.
#pragma once

#include "agent/reconcile/finalizer_steps.h"

namespace nodehook {

class OwnFinalizerOnly final : public FinalizerSteps {
 public:
  explicit OwnFinalizerOnly(FinalizerSteps& keeper) : keeper_(keeper) {}

  const std::string& Name() const override { return keeper_.Name(); }
  Status Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) override {
    return keeper_.Claim(resource, object, facts);
  }
  Status Release(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) override {
    return keeper_.Release(resource, object, facts);
  }
  // The steward's work: nothing for this node to do.
  Status SweepDeparted(const WatchedResource&, const KubeObject&, const ObjectFacts&) override {
    return Status::Ok();
  }

 private:
  FinalizerSteps& keeper_;
};

}  // namespace nodehook
