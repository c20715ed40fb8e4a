// FinalizerKeeper: finalizer mode's API side, the one place that edits metadata.finalizers.
//   Claim       this node's finalizer goes on before its first hook for an object;
//   Release     it comes off once the delete hook succeeded (the caller stored that first, so a
//               failed Release never reruns the hook);
//   SweepDeparted  finalizers of nodes that left the cluster come off, each only after a fresh
//               GET of its Node answered 404. The Node watch (NodeRoster) is a hint that saves
//               the GET for nodes it shows; it is never taken as proof that a node is gone, so a
//               node that joined (or was re-created) after any list keeps its finalizer.
//               With AgentWatch (finalizer_release_after_seconds > 0), the finalizers of nodes
//               whose Node stays but whose agent left come off too: the AgentPodRoster must have
//               seen no agent pod bound there for `release_after`, its watch must be healthy,
//               and a fresh List of the agent pods on that node must come back empty. A node
//               whose agent crash-loops keeps its pod, so it keeps its finalizers.
//               With NotReadyRule (finalizer_release_not_ready_seconds > 0), the finalizers of
//               nodes whose Node has not been Ready for that long come off too (a node powered
//               off for good keeps its Node and its bound pod): the NodeRoster must have seen it
//               NotReady that long, and a fresh GET of the Node must still say so.
//               Each release is logged and posted as a Warning Event on the object.
// Every patch is guarded and retried after a concurrent change (finalizer_edit.h).
// Thread-safe (borrows a thread-safe KubeClient and NodeRoster, which must outlive it).
#pragma once

#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/events/event_recorder.h"
#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/finalizer_edit.h"
#include "agent/finalizers/node_roster.h"
#include "agent/kube/client/kube_client.h"
#include "agent/reconcile/finalizer_steps.h"

namespace nodehook {

// Judging nodes by this DaemonSet's agent pods (all borrowed, outliving the keeper).
struct AgentWatch {
  AgentPodRoster* roster = nullptr;  // null: finalizers come off only when the Node is gone
  ResourceRef pods;                  // the agent pods: namespace and label selector
  std::function<bool()> healthy;     // the pod watch has listed and is not failing
  const Clock* clock = nullptr;
};

// Judging nodes by their Ready condition (finalizer_release_not_ready_seconds); off when `after`
// is zero. The clock is borrowed.
struct NotReadyRule {
  Duration after{0};
  const Clock* clock = nullptr;
};

class FinalizerKeeper final : public FinalizerSteps {
 public:
  // `roster` may be null (no Node watch): then every foreign finalizer is checked with a GET.
  // `events` (may be null) hears of every finalizer released for a departed node or agent.
  FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster, AgentWatch agents = {},
                  EventRecorder* events = nullptr, NotReadyRule not_ready = {});

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
  // Why `finalizer` may come off ("" = it stays): its Node is gone, or its agent left.
  Result<std::string> WhyReleasable(const std::string& finalizer);
  // "" unless no agent pod was bound to the finalizer's node for release_after, confirmed by a
  // fresh List of the agent pods on that node.
  Result<std::string> AgentAway(const std::string& finalizer);
  // "" unless the finalizer's Node has not been Ready for not_ready_.after, confirmed by a
  // fresh GET (a 404 then: its Node is gone).
  Result<std::string> LongNotReady(const std::string& finalizer);

  KubeClient& client_;
  const std::string node_name_;
  const std::string own_;
  const NodeRoster* const roster_;
  const AgentWatch agents_;
  EventRecorder* const events_;
  const NotReadyRule not_ready_;
};

}  // namespace nodehook
