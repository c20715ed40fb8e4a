// NodeTargeting: whether this node should act on an object at all (issue 4, opt-in per watched
// resource). The resource config names where in the object a node selector lives (e.g.
// "spec.nodeSelector", a label map); the agent acts only while its own Node's labels match.
// An object that stops matching is handled as deleted for this node.
// Implementations are thread-safe: workers ask concurrently while the Node watch updates labels.
#pragma once

#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"

namespace nodehook {

class NodeTargeting {
 public:
  virtual ~NodeTargeting() = default;
  // True when `resource` has no node selector path, or the object's selector matches this node's
  // current labels. An object without a selector at that path matches every node. `facts` are
  // the object's (read with the resource's FactsSpec), which hold the selector.
  virtual bool Matches(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) const = 0;
};

// For agents where no resource targets nodes: every object is every node's.
class EveryNode final : public NodeTargeting {
 public:
  bool Matches(const WatchedResource&, const KubeObject&, const ObjectFacts&) const override { return true; }
};

// One shared EveryNode.
inline const NodeTargeting& EveryNodeTargeting() {
  static const EveryNode every;
  return every;
}

}  // namespace nodehook
