// Readiness: the parts of readiness/ this agent runs for the resources with a ready_condition.
// For each, a NodeReadyReporter that keeps this node's record from what the agent knows (its
// watch's cache with the states it settled, the store's failing handlers in the latest
// snapshot); and with tuning.cross_node_writes "agents" a ReadyCoordination, so some agent
// writes the condition on the objects ("steward": the steward does).
// Owns what it builds; borrows everything passed. Start() once.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/pipeline/mode_set.h"
#include "agent/pipeline/object_views_publisher.h"
#include "agent/pipeline/resource_pipeline.h"
#include "agent/readiness/node_ready_reporter.h"
#include "agent/readiness/ready_coordination.h"

namespace nodehook {

// What this node knows of `pipeline`'s objects for its record: the objects it acts on, done at
// the state it settled them in, failed at the state a failing handler works towards.
ReadyReport ReportOf(const ResourcePipeline& pipeline, const ObjectViewsPublisher& views);

class Readiness {
 public:
  Readiness(const Config& config, KubeClient& client, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
            const ObjectViewsPublisher& views, const ModeSet& modes);

  bool empty() const { return reporters_.empty(); }
  // Each part on a thread of its own, until `stop`.
  void Start(std::vector<std::thread>& threads, const CancelToken& stop);

 private:
  std::vector<std::unique_ptr<NodeReadyReporter>> reporters_;
  std::vector<std::unique_ptr<ReadyCoordination>> writers_;
};

}  // namespace nodehook
