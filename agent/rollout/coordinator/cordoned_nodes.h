// CordonedNodes: the Nodes a rollout keeps cordoned, as the coordinator (rollout_coordination.h)
// and kubectl count them against max_nodes (rollout_judge.h): a node the rollout cordoned is
// disrupted whether or not it holds a slot (its agent away past a lease, a reboot past its hold,
// a failed node kept cordoned), until it is uncordoned or a person takes the cordon over.
// A Node counts when it is unschedulable and carries one of the rollout's cordon marks
// (kCordonMarkPrefix + rid + "."; nodework/node_cordon.h). A mark on a schedulable Node is stale
// (someone uncordoned it): it counts for nothing, and the next cordon removes it.
// The coordinator feeds it from a watch of the cordoned Nodes only (fieldSelector
// spec.unschedulable=true), so its cost follows the cordoned nodes, not the fleet; an uncordon
// takes the Node out of that watch (DELETED).
// Thread-safe: the watch's thread writes, the coordinator's reads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/kube/client/kube_types.h"
#include "agent/watch/watcher.h"

namespace nodehook {

// The Nodes the watch lists: the cordoned ones.
ResourceRef CordonedNodesResource();

// The objects ("namespace/name, ...") that the rollout `rid`'s cordon marks on the Node name, when
// it is cordoned and carries one; nullopt otherwise (a JSON that is no Node is none).
std::optional<std::string> RolloutCordonOf(const std::string& rid, const std::string& node_json);

// Every Node of `nodes` that the rollout keeps cordoned, with RolloutCordonOf's objects.
std::map<std::string, std::string> RolloutCordons(const std::string& rid, const std::vector<KubeObject>& nodes);

class CordonedNodes final : public WatchSink {
 public:
  explicit CordonedNodes(std::string rid) : rid_(std::move(rid)) {}

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnQuarantined(const BadObject&, WatchEventType) override {}
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;

  // Whether the watch has listed the Nodes once: before that, nobody knows who is disrupted.
  bool listed() const;
  // Node name -> the objects its marks name.
  std::map<std::string, std::string> Nodes() const;

 private:
  const std::string rid_;
  mutable Mutex mu_;
  bool listed_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::string> nodes_ GUARDED_BY(mu_);
};

}  // namespace nodehook
