// NodeConditionWriter: keeps each configured resource's NodeCondition on this agent's own Node
// ("node_outputs": {"condition": TYPE}), by server-side apply to nodes/<node>/status with one
// field manager per resource (NodeConditionManager), so two resources never own each other's
// condition, and the kubelet's conditions are never touched.
//   - Writes only when a condition's status, reason or message changes: no heartbeat. Its
//     lastTransitionTime moves only when the status does. A change of the message alone (a
//     failing hook's message often names its retry) is written at most once per
//     `message_every`, so a failure costs a bounded number of writes however often it retries.
//   - Reads the Node once, at its first round: a condition already as derived is not written
//     again (a restart with nothing changed writes nothing: "node condition kept"), and one whose
//     resource left the config (a "nodehook-" manager of status that no resource names any more)
//     is removed by applying nothing as that manager.
//   - A change handled quickly costs nothing: a True or False verdict turns Unknown on the Node
//     only once "in progress" lasted `unknown_after`.
//   - After a restart the agent catches up first (lists, then looks at every object again): a
//     condition found on the Node keeps its verdict through that, instead of turning Unknown and
//     back, until a verdict (True or False) is derived or `hold_unknown` has passed.
//   - A failed read or write is tried again the next round (logged once until one succeeds);
//     the derived value is never lost, only late.
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
#include "agent/outputs/node_condition.h"

namespace nodehook {

// The field manager of a resource's node outputs: "nodehook-<plural>[.<group>]" (at most 128
// characters, the API server's limit: a longer one is cut and made unique by a hash).
std::string NodeConditionManager(const ResourceRef& resource);
inline constexpr const char* kNodeOutputsManagerPrefix = "nodehook-";

struct NodeConditionSource {
  ResourceRef resource;
  std::string type;                            // the NodeCondition type
  std::function<NodeConditionValue()> derive;  // thread-safe, quick
};

struct NodeConditionWriterOptions {
  Duration round = std::chrono::seconds(2);  // how often each condition is derived again
  // Managers to retire besides those the Node names: what this node applied under a config that
  // had more node outputs (the state file's note; pipeline/node_outputs.h), and `retired` is told
  // of each once it is done. With no sources the Node is not read at all (no right to, maybe).
  std::vector<std::string> retire;
  std::function<void(const std::string& manager)> retired;
  // How long a condition found on the Node at start keeps its verdict while this run's is Unknown.
  Duration hold_unknown = std::chrono::seconds(60);
  // How long a verdict must have been Unknown before it is written so.
  Duration unknown_after = std::chrono::seconds(10);
  // The least time between two writes that change only the message.
  Duration message_every = std::chrono::seconds(60);
};

class NodeConditionWriter {
 public:
  // `wall` stamps lastTransitionTime; `monotonic` paces the rounds.
  NodeConditionWriter(KubeClient& client, std::string node, std::vector<NodeConditionSource> sources, Clock& wall,
                      Clock& monotonic, NodeConditionWriterOptions options = {});

  void Run(const CancelToken& stop);
  // One round. False when a read or write failed (tried again next round).
  bool Tick();

 private:
  struct Applied {
    NodeConditionValue value;
    std::string last_transition_time;
    std::optional<TimePoint> written_at;  // monotonic; unset for what was found on the Node
  };
  // Whether `value` is to be written now (the rules above); logs "node condition kept".
  bool Due(const NodeConditionSource& source, const NodeConditionValue& value);
  bool ReadNode();
  bool Apply(const NodeConditionSource& source, const NodeConditionValue& value);
  bool Retire(const std::string& manager);
  void Failed(const std::string& what, const Status& status);

  KubeClient& client_;
  const std::string node_;
  const std::vector<NodeConditionSource> sources_;
  Clock& wall_;
  Clock& monotonic_;
  const NodeConditionWriterOptions options_;
  bool node_read_ = false;
  TimePoint started_{};                      // the first round, on the monotonic clock
  std::map<std::string, Applied> applied_;  // by condition type: what the Node holds as far as known
  std::set<std::string> inherited_;          // types found on the Node at start, not derived yet this run
  std::map<std::string, TimePoint> unknown_since_;  // by type: derived Unknown since, while the Node says otherwise
  std::set<std::string> retiring_;          // managers of resources no longer configured
  bool warned_ = false;                     // a failure was logged; cleared by the next success
};

}  // namespace nodehook
