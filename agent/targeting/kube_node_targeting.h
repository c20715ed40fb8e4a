// KubeNodeTargeting: NodeTargeting against this node's labels as NodeLabels holds them.
//
// The resource's node_selector_path names a label map in the object (e.g. spec.nodeSelector).
// Missing, null or empty there: the object targets every node. Otherwise every key/value of the
// selector must equal this node's label; while the node's labels are unknown (Node not yet
// listed, or deleted) nothing with a selector matches. A selector that is not a map of strings
// targets no node, and is logged once per object uid.
//
// Thread-safe. Refers to a NodeLabels it does not own, which must outlive it.
#pragma once

#include <string>
#include <unordered_set>

#include "agent/base/mutex.h"
#include "agent/targeting/node_labels.h"
#include "agent/targeting/node_targeting.h"

namespace nodehook {

// What lies at a dotted path of an object's JSON, read as a node selector (one ReadFacts).
NodeSelectorLookup ReadNodeSelector(const std::string& object_json, const std::string& dotted_path);

class KubeNodeTargeting final : public NodeTargeting {
 public:
  explicit KubeNodeTargeting(const NodeLabels& labels);

  bool Matches(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) const override;

 private:
  void ReportInvalidOnce(const WatchedResource& resource, const KubeObject& object, const std::string& why) const;

  const NodeLabels& labels_;
  mutable Mutex mu_;
  mutable std::unordered_set<std::string> reported_uids_ GUARDED_BY(mu_);  // bounded, see .cc
};

}  // namespace nodehook
