// ResourcePipeline: everything one watched resource runs on, built once at start:
//   watcher -> tracker (its ObjectCache, and the queue's keys) -> the reconcile context
//   (the resource's config, cache and modes, see resource_context.h).
// One per watched resource, in config order; owned by the Agent and never moved once built.
// The parts are thread-safe as documented in their headers.
#pragma once

#include <string>

#include "agent/config/config.h"
#include "agent/pipeline/mode_set.h"
#include "agent/queue/queue_key.h"
#include "agent/reconcile/resource_context.h"
#include "agent/watch/resource_tracker.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct ResourcePipeline {
  ResourcePipeline(size_t position, const WatchedResource& resource, KubeClient& client, WorkQueue& queue,
                   StateStore& store, Clock& clock, ModeSet& modes, const WatcherOptions& watcher_options,
                   ResourceTracker::FirstListFn on_first_list)
      : index(position),
        config(resource),
        tracker(position, resource.ref, queue, store, clock, std::move(on_first_list),
                resource.hooks.count(kReasonEvent) > 0, FactsSpecOf(resource)),
        watcher(client, resource.ref, tracker, clock, watcher_options),
        context{resource,
                tracker.cache(),
                modes.TargetingFor(resource),
                modes.FinalizersFor(resource),
                modes.GateFor(resource),
                KeepsObjectBytes(resource),
                modes.RolloutFor(resource)} {}

  ResourcePipeline(const ResourcePipeline&) = delete;
  ResourcePipeline& operator=(const ResourcePipeline&) = delete;

  QueueKey Key(const std::string& uid) const { return QueueKey{index, uid}; }

  const size_t index;
  const WatchedResource& config;
  ResourceTracker tracker;
  Watcher watcher;
  const ResourceContext context;
};

}  // namespace nodehook
