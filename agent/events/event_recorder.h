// EventRecorder: reports handler outcomes as Kubernetes Events on the object (issue 4). Events
// are rate-limited per object per node and carry this node as reportingInstance, so a thousand
// nodes never flood one object. Implementations are thread-safe and never block a worker for long.
#pragma once

#include <string>

#include "agent/kube/client/kube_types.h"

namespace nodehook {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // A handler gave up (retry limits reached): type Warning.
  virtual void PermanentFailure(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                                const std::string& message) = 0;
  // An object is skipped as bad (too deep, too big, unreadable): type Warning. By default
  // reported like a permanent failure of a handler named "quarantine".
  virtual void Quarantined(const ResourceRef& resource, const ObjectMeta& object, const std::string& message) {
    PermanentFailure(resource, object, "quarantine", message);
  }
  // A handler finished (only when the config asks for success events): type Normal.
  virtual void Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler) = 0;
  // A handler failed for the `attempt`-th time (1-based) and will be retried: type Warning.
  // Called on every failure; the recorder decides which ones become Events.
  virtual void Failing(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/, const std::string& /*handler*/,
                       int /*attempt*/, const std::string& /*message*/) {}
  // A handler that had failed `failures` times succeeded: type Normal.
  virtual void Recovered(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/,
                         const std::string& /*handler*/, int /*failures*/) {}
  // Another node's finalizer was taken off the object because that node's agent left
  // (`reason` says how it was judged): type Warning, its delete hook never ran there.
  virtual void FinalizerReleased(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/,
                                 const std::string& /*finalizer*/, const std::string& /*reason*/) {}
  // A hook's node outputs were refused (`message` says which key and why): type Warning.
  virtual void OutputsRefused(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/,
                              const std::string& /*handler*/, const std::string& /*message*/) {}
  // A rollout's node step on this node (nodework/node_steps.h), e.g. reason NodeDrainBlocked
  // naming the pod and why, NodeKeptCordoned, NodeRebooted; `warning` sets the type.
  virtual void NodeStep(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/, const std::string& /*reason*/,
                        bool /*warning*/, const std::string& /*note*/) {}
  // The same about the Node itself (`node`: its name and uid), which `kubectl describe node`
  // shows: e.g. NodeDrainBlocked naming the pod and the budget that holds the drain.
  virtual void NodeEvent(const ObjectMeta& /*node*/, const std::string& /*reason*/, bool /*warning*/,
                         const std::string& /*note*/) {}
  // A fleet rollout of one object state halted or completed (`reason` RolloutHalted or
  // RolloutCompleted). Posted once per object state across the fleet, whichever node sees it
  // first: the Event's name is derived from the object, the reason and the state.
  virtual void RolloutReached(const ResourceRef& /*resource*/, const ObjectMeta& /*object*/,
                              const std::string& /*reason*/, const std::string& /*state*/, bool /*warning*/,
                              const std::string& /*note*/) {}
};

// Reports nothing: for agents and tests that post no Events, instead of null checks.
class NullEventRecorder final : public EventRecorder {
 public:
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
};

// One shared NullEventRecorder.
inline EventRecorder& NoEvents() {
  static NullEventRecorder none;
  return none;
}

}  // namespace nodehook
