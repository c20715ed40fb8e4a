// FinalizerKeeper: finalizer mode's API side, the one place that edits metadata.finalizers.
//   Claim       this node's finalizer goes on before its first hook for an object;
//   Release     it comes off once the delete hook succeeded (the caller stored that first, so a
//               failed Release never reruns the hook);
//   SweepDeparted  finalizers of nodes that left the cluster come off, each only after a fresh
//               GET of its Node answered 404. The Node watch (NodeRoster) is a hint that saves
//               the GET for nodes it shows; it is never taken as proof that a node is gone, so a
//               node that joined (or was re-created) after any list keeps its finalizer.
// Every patch is guarded and retried after a concurrent change (finalizer_edit.h).
// Thread-safe (borrows a thread-safe KubeClient and NodeRoster, which must outlive it).
#pragma once

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/finalizers/finalizer_edit.h"
#include "agent/finalizers/node_roster.h"
#include "agent/kube/kube_client.h"
#include "agent/reconcile/finalizer_steps.h"

namespace nodehook {

class FinalizerKeeper final : public FinalizerSteps {
 public:
  // `roster` may be null (no Node watch): then every foreign finalizer is checked with a GET.
  FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster);

  const std::string& own_finalizer() const { return own_; }
  const std::string& Name() const override { return own_; }

  // Ok when this node's finalizer is on the object (now or already). kConflict when the fresh
  // object is being deleted (no finalizer may be added then) or the list kept changing.
  [[nodiscard]] Status Claim(const WatchedResource& resource, const KubeObject& object,
                             const ObjectFacts& facts) override;
  // Ok when this node's finalizer is off the object (now or already), or the object is gone.
  [[nodiscard]] Status Release(const WatchedResource& resource, const KubeObject& object,
                               const ObjectFacts& facts) override;
  // Removes the finalizers of departed nodes from a deleting object. Ok when none is left to
  // check; an error when some node could not be read or a patch failed (look again later).
  [[nodiscard]] Status SweepDeparted(const WatchedResource& resource, const KubeObject& object,
                                     const ObjectFacts& facts) override;

 private:
  // True when every Node that could own `finalizer` is answered 404 by a fresh GET.
  Result<bool> ConfirmedGone(const std::string& finalizer);

  KubeClient& client_;
  const std::string node_name_;
  const std::string own_;
  const NodeRoster* const roster_;
};

}  // namespace nodehook
