// CordonedNodes: the Nodes the rollout keeps cordoned (rules/rollout_cordons.h), as the
// coordinator (rollout_coordination.h) counts them against max_nodes. The coordinator feeds it
// from a watch of the cordoned Nodes only (CordonedNodesResource), so its cost follows the
// cordoned nodes, not the fleet; an uncordon takes the Node out of that watch (DELETED).
// Thread-safe: the watch's thread writes, the coordinator's reads.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/watch/watcher.h"

namespace nodehook {

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
