// NodeOutputsWriter: keeps each configured resource's node outputs on this agent's own Node, with
// one field manager per resource (NodeOutputsManager), so two resources never own each other's
// keys and the kubelet's fields are never touched:
//   - its derived NodeCondition ("node_outputs": {"condition"}), paced by ConditionPacing (no
//     heartbeat, a message alone at most once a minute, Unknown only once work lasts, a restart's
//     catch-up keeps the verdict found on the Node);
//   - what its objects' hooks published (published_outputs.h), the union over its objects:
//     conditions with the derived one by server-side apply to nodes/<node>/status; labels and
//     annotations by server-side apply to the Node; taints by a guarded read-modify-write
//     (node_taints.h). Fields a manager applied before and no longer names are removed by the
//     API server; the taints it put there are taken off by the next taint write.
// Writes only what changed since the last write: a round with nothing new writes nothing. It
// reads the Node at its first round, so a restart finds what is already there (the managers'
// fields in managedFields, the taints in the state file's note) and writes nothing; and again
// every `recheck` (one GET), so what someone took off or changed by hand (`kubectl label node x
// key-`, a condition patched away) is applied again then, not only when a hook publishes anew.
// A manager that no resource uses any more (its resource left the config or keeps no outputs)
// is retired: applied empty (status, and the Node if it applied there), its taints taken off. A
// resource that keeps its condition but drops its prefixes has what its hooks published taken off
// the same way.
// Without sources (every resource dropped its outputs) the Node is not read: the agent may have
// no right to; what to retire comes from the state file's notes.
// A failed read or write is tried again the next round (logged once until one succeeds); the
// wanted outputs are never lost, only late.
// Run() on one thread (Tick() in tests); borrows the client and clocks.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/kube/client/kube_client.h"
#include "agent/outputs/condition_pacing.h"
#include "agent/outputs/node_condition.h"
#include "agent/outputs/node_view.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {

// The field manager of a resource's node outputs: "nodehook-<plural>[.<group>]" (at most 128
// characters, the API server's limit: a longer one is cut and made unique by a hash).
std::string NodeOutputsManager(const ResourceRef& resource);
inline constexpr const char* kNodeOutputsManagerPrefix = "nodehook-";

struct NodeOutputsSource {
  ResourceRef resource;
  std::string condition;                       // the derived NodeCondition's type; "" = none
  std::function<NodeConditionValue()> derive;  // set with `condition`; thread-safe, quick
  // The union of what its objects' hooks published; null when its hooks may publish nothing.
  std::function<Result<PublishedOutputs>()> published;
};

// How often the agent reads its Node again for outputs taken off by hand: one GET per node.
inline constexpr Duration kNodeOutputsRecheck = std::chrono::minutes(5);

struct NodeOutputsWriterOptions {
  Duration round = std::chrono::seconds(2);  // how often the outputs are derived again
  // Managers to retire besides those the Node names: what this node applied under a config that
  // had more node outputs (the state file's note; pipeline/node_outputs.h), and `retired` is told
  // of each once it is done.
  std::vector<std::string> retire;
  std::function<void(const std::string& manager)> retired;
  // The taints each manager put on the Node (the state file's note), and how to note them anew.
  std::map<std::string, std::vector<OutputTaint>> noted_taints;
  std::function<void(const std::string& manager, const std::vector<OutputTaint>& taints)> note_taints;
  // Managers that applied the Node itself (labels, annotations) under an earlier config (a note):
  // a retirement applies them empty there too, even without reading the Node.
  std::set<std::string> metadata_managers;
  // Told after each round whether a configured manager holds anything on the Node (so a later
  // config without it knows whether there is anything to retire), and that it applied the Node.
  std::function<void(const std::string& manager, bool holds, bool applied_metadata)> noted;
  PacingOptions pacing;
  // How often the Node is read again, to apply again what someone took off; zero: never (the
  // agent sets 5 minutes; tests whose fake Node does not take the applies leave it).
  Duration recheck{0};
};

class NodeOutputsWriter {
 public:
  // `wall` stamps lastTransitionTime; `monotonic` paces the rounds.
  NodeOutputsWriter(KubeClient& client, std::string node, std::vector<NodeOutputsSource> sources, Clock& wall,
                    Clock& monotonic, NodeOutputsWriterOptions options = {});

  void Run(const CancelToken& stop);
  // One round. False when a read or write failed (tried again next round).
  bool Tick();

 private:
  // What the Node holds of one manager's outputs, as far as known.
  struct Held {
    std::map<std::string, NodeConditionOnNode> conditions;  // by type
    std::optional<TimePoint> derived_written_at;            // monotonic; unset: found on the Node
    std::map<std::string, std::string> labels, annotations;
    std::vector<OutputTaint> taints;
    bool looked = false;  // this run compared the published outputs with the Node once
    std::optional<bool> told_holds;  // what `noted` was last told
    bool Empty() const { return conditions.empty() && labels.empty() && annotations.empty() && taints.empty(); }
  };
  Result<NodeView> GetNode();  // this Node as the API server has it now
  bool ReadNode();
  // Reads the Node again: what this node holds and no longer finds there as it wrote it is
  // forgotten, so this round applies it again.
  bool Recheck();
  bool WriteSource(const NodeOutputsSource& source);
  bool ApplyStatus(const NodeOutputsSource& source, Held& held, const std::vector<OutputCondition>& conditions,
                   bool derived_due, bool published_changed);
  bool ApplyMetadata(const NodeOutputsSource& source, Held& held, const PublishedOutputs& wanted);
  bool PutTaints(const NodeOutputsSource& source, Held& held, const std::vector<OutputTaint>& wanted);
  bool Retire(const std::string& manager);
  void NoteTaints(const std::string& manager, const std::vector<OutputTaint>& taints);
  void Failed(const std::string& what, const Status& status);

  KubeClient& client_;
  const std::string node_;
  const std::vector<NodeOutputsSource> sources_;
  Clock& wall_;
  Clock& monotonic_;
  const NodeOutputsWriterOptions options_;
  ConditionPacing pacing_;
  bool node_read_ = false;
  TimePoint recheck_at_{};  // monotonic: when the Node is read again
  std::map<std::string, Held> held_;                              // by manager
  std::map<std::string, std::vector<OutputTaint>> noted_taints_;  // by manager: what it may have put there
  std::set<std::string> applied_metadata_;  // managers the Node says applied the Node itself
  std::set<std::string> retiring_;          // managers of resources no longer configured
  bool warned_ = false;                     // a failure was logged; cleared by the next success
};

}  // namespace nodehook
