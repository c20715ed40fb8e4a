// NodeTargeting: whether this node should act on an object at all (issue 4, opt-in per watched
// resource). The resource config names where in the object a node selector lives (e.g.
// "spec.nodeSelector", a label map); the agent acts only while its own Node's labels match.
// An object that stops matching is handled as deleted for this node.
// Implementations are thread-safe: workers ask concurrently while the Node watch updates labels.
#pragma once

#include "agent/config/config.h"
#include "agent/kube/kube_types.h"

namespace nodehook {

class NodeTargeting {
 public:
  virtual ~NodeTargeting() = default;
  // True when `resource` has no node selector path, or the object's selector matches this node's
  // current labels. An object without a selector at that path matches every node.
  virtual bool Matches(const WatchedResource& resource, const KubeObject& object) const = 0;
};

}  // namespace nodehook
