#include "agent/targeting/kube_node_targeting.h"

#include "agent/base/log.h"

namespace nodehook {
namespace {

// Objects with a bad selector are rare; past this many remembered uids the set starts over, so a
// long-lived agent may repeat a warning but never grows without bound.
constexpr size_t kMaxReportedUids = 10'000;

}  // namespace

NodeSelectorLookup ReadNodeSelector(const std::string& object_json, const std::string& dotted_path) {
  FactsSpec spec;
  spec.node_selector_path = dotted_path;
  return ReadFacts(object_json, spec)->selector;
}

KubeNodeTargeting::KubeNodeTargeting(const NodeLabels& labels) : labels_(labels) {}

bool KubeNodeTargeting::Matches(const WatchedResource& resource, const KubeObject& object,
                                const ObjectFacts& facts) const {
  if (resource.node_selector_path.empty()) return true;
  const NodeSelectorLookup& lookup = facts.selector;
  switch (lookup.kind) {
    case NodeSelectorLookup::Kind::kAbsent: return true;
    case NodeSelectorLookup::Kind::kInvalid:
      ReportInvalidOnce(resource, object, lookup.why);
      return false;
    case NodeSelectorLookup::Kind::kSelector:
      return lookup.selector.empty() || labels_.Matches(lookup.selector);
  }
  return false;
}

void KubeNodeTargeting::ReportInvalidOnce(const WatchedResource& resource, const KubeObject& object,
                                          const std::string& why) const {
  {
    MutexLock lock(&mu_);
    if (reported_uids_.size() >= kMaxReportedUids) reported_uids_.clear();
    if (!reported_uids_.insert(object.meta.uid).second) return;
  }
  Log(LogLevel::kWarn, "node selector unreadable",
      {{"object", object.meta.Key()},
       {"uid", object.meta.uid},
       {"resource", resource.ref.Id()},
       {"path", resource.node_selector_path},
       {"error", why},
       {"next", "this node does not act on the object until its selector is a map of strings"}});
}

}  // namespace nodehook
