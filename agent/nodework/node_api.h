// NodeApi: what a rollout's node steps (node_steps.h) need of the API server for this node: its
// cordon, its marks, its boot ID, its pods and their eviction. KubeNodeApi (kube_node_api.h) is
// the one implementation; tests use a fake. Implementations are thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

// The cordon marks (kCordonMarkPrefix, config.h) are one per rollout, so two rollouts that cordon
// one node do not give it back while the other still works there. A Node with none that is
// unschedulable was cordoned by someone else. A mark on a schedulable Node is stale: someone ran
// `kubectl uncordon` and left it (node_cordon.h removes it at the next cordon).

struct NodeState {
  std::string uid;   // with the name, for Events about the Node (kubectl describe node shows them)
  std::string name;
  bool unschedulable = false;
  std::map<std::string, std::string> marks;  // kCordonMarkPrefix annotations: key -> value
  std::string boot_id;                       // status.nodeInfo.bootID, as the kubelet reports it
  std::string resource_version;
  // The Node as an Event's object.
  ObjectMeta Meta() const {
    ObjectMeta meta;
    meta.uid = uid;
    meta.name = name;
    return meta;
  }
};

// The label of the steward's pods (deploy/overlays/steward, the chart): a rollout's own drain must
// not evict the component that coordinates it and gives back cordons.
inline constexpr const char* kStewardLabel = "nodehook.io/steward";

struct PodOnNode {
  std::string namespace_name;
  std::string name;
  std::string uid;
  bool daemon_set = false;   // controlled by a DaemonSet: it would come straight back
  bool mirror = false;       // a static pod's mirror: the kubelet owns it
  bool finished = false;     // Succeeded or Failed: holds nothing
  bool terminating = false;  // deleted already, waiting for its grace period
  bool controlled = false;   // has a controller (ownerReferences): something brings it back elsewhere
  bool local_storage = false;     // an emptyDir volume: its data goes with the pod
  bool tolerates_cordon = false;  // tolerates node.kubernetes.io/unschedulable: may be placed here again
  bool steward = false;      // nodehook's own steward (label kStewardLabel): never evicted by our drain
  std::string Key() const { return namespace_name + "/" + name; }
};

class NodeApi {
 public:
  virtual ~NodeApi() = default;
  virtual Result<NodeState> GetNode() = 0;
  // Sets spec.unschedulable and the mark `key` = `value`, and removes the `stale` marks, in one
  // write; kConflict when the Node changed since `seen`.
  virtual Status Cordon(const NodeState& seen, const std::string& key, const std::string& value,
                        const std::vector<std::string>& stale) = 0;
  // Removes the mark `key`, and with `uncordon` clears spec.unschedulable; kConflict as above.
  virtual Status Unmark(const NodeState& seen, const std::string& key, bool uncordon) = 0;
  // The pods bound to this node that match `selector` ("" = all).
  virtual Result<std::vector<PodOnNode>> Pods(const std::string& selector) = 0;
  // Asks the Eviction API to evict the pod (conditioned on its uid): kTooManyRequests when a
  // disruption budget refuses it now, kNotFound when it is gone.
  virtual Status Evict(const PodOnNode& pod, int grace_period_seconds) = 0;
};

}  // namespace nodehook
