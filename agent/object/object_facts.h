// ObjectFacts: everything the agent decides on, read from one object version in one parse.
//
// The watch path reads each version it caches exactly once (ObjectCache, on the watcher thread)
// and hands the facts on, shared and immutable: the reconciler's Decide, node targeting, the
// finalizer keeper, the singleton gate and the check and snapshot lanes read facts, never the
// object's JSON. Only a hook run still parses the two essences again, to build the diff.
//   essence           canonical JSON of what a change must touch to count (essence.h)
//   digest            EssenceDigest(essence): the target a retrying handler works towards
//   finalizers        metadata.finalizers
//   selector          the node selector at the resource's node_selector_path
//   singleton_digest  the nodehook.io/singleton-handled annotation
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/base/status.h"
#include "agent/config/config.h"

namespace nodehook {

using LabelMap = std::map<std::string, std::string>;

// What of an object version a resource's decisions need: read once per version.
struct FactsSpec {
  std::vector<std::string> ignored_paths;  // removed from the essence
  std::string node_selector_path;          // "" = the resource does not target nodes
};
FactsSpec FactsSpecOf(const WatchedResource& resource);

// What lies at the resource's node selector path.
struct NodeSelectorLookup {
  enum class Kind { kAbsent, kSelector, kInvalid };
  Kind kind = Kind::kAbsent;
  LabelMap selector;  // kSelector: the label map (may be empty)
  std::string why;    // kInvalid: what was found instead
};

struct ObjectFacts {
  // Not ok when the JSON could not be read as an object; then nothing below is set.
  Status readable;
  std::string essence;
  std::string digest;
  // Not ok when metadata.finalizers is not an array of strings (then `finalizers` is empty).
  Status finalizers_readable;
  std::vector<std::string> finalizers;
  NodeSelectorLookup selector;
  std::string singleton_digest;  // "" when absent
  bool rollout_paused = false;   // kRolloutPausedAnnotation is present
  // Its value is kRolloutStopNodes: the nodes inside stop too (their node steps give the cordon back).
  bool rollout_stop_nodes = false;
  std::string rollout_resume;    // kRolloutResumeAnnotation's value; "" when absent

  bool HasFinalizer(const std::string& name) const;
};

using FactsPtr = std::shared_ptr<const ObjectFacts>;

// The one parse of an object version.
FactsPtr ReadFacts(std::string_view object_json, const FactsSpec& spec);

// How many times ReadFacts ran in this process: lets tests count the parses per change.
uint64_t FactsReadCount();

}  // namespace nodehook
