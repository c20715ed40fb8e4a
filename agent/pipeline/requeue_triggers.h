// RequeueTriggers: requeues added from outside the reconcile loop, in the manner of
// controller-runtime's EnqueueRequestsFromMapFunc. When something other than an object changes,
// a map function names the objects to look at again, and they go on the queue:
//   this Node's labels changed     -> every object of a resource with node targeting (one that
//                                     stopped matching is handled as deleted here)
//   a Node left the cluster, or a  -> objects being deleted that carry its finalizer (a resync
//   node had no agent pod for        does not requeue unchanged objects); the second fires from
//   finalizer_release_after_seconds  housekeeping, by the injected clock (ModeSet::Tick)
//   a leadership term started      -> every object of a singleton resource
//   a rollout slot granted to this -> that object, at once (not at its next ask for a slot)
//   node
// Registered once on the ModeSet's sources; the periodic lanes hear of every requeued resource.
// Thread-safe: the sources call from their own threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/pipeline/mode_set.h"
#include "agent/pipeline/resource_pipeline.h"
#include "agent/queue/work_queue.h"

namespace nodehook {

class RequeueTriggers {
 public:
  // `changed(index)` tells the periodic lanes that resource `index` was requeued whole.
  // Borrows the queue and pipelines, which must outlive the triggers' sources.
  RequeueTriggers(WorkQueue& queue, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
                  std::function<void(size_t index)> changed);

  // Registers the triggers above on `modes`.
  void RegisterOn(ModeSet& modes);

  // The map functions, exposed for tests: which keys each trigger requeues.
  std::vector<QueueKey> Targeted() const;
  std::vector<QueueKey> DeletingWith(const std::string& finalizer) const;
  std::vector<QueueKey> Singletons() const;

 private:
  std::vector<QueueKey> AllOf(const std::function<bool(const WatchedResource&)>& which) const;
  void RequeueWhole(const std::function<bool(const WatchedResource&)>& which);

  WorkQueue& queue_;
  const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines_;
  std::function<void(size_t)> changed_;
};

}  // namespace nodehook
