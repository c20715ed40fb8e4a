#include "agent/pipeline/readiness.h"

#include "agent/base/thread_name.h"
#include "agent/http/objects_endpoint.h"
#include "agent/kube/transport/server_clock.h"

namespace nodehook {

ReadyReport ReportOf(const ResourcePipeline& pipeline, const ObjectViewsPublisher& views) {
  ReadyReport report;
  report.synced = pipeline.watcher.synced();
  const ObjectCache& cache = pipeline.tracker.cache();
  for (const std::string& uid : cache.Uids()) {
    std::optional<CachedObject> cached = cache.Get(uid);
    if (!cached || cached->gone) continue;
    std::string version;
    if (cached->object) {
      // An object this node does not act on (node targeting) has no result here.
      if (!cached->facts || !pipeline.context.targeting.Matches(pipeline.config, *cached->object, *cached->facts)) {
        continue;
      }
      version = cached->object->meta.resource_version;
    } else if (cached->handled_meta) {  // handled, its bytes dropped
      version = cached->handled_meta->resource_version;
    }
    report.known.insert(uid);
    const std::optional<SettledState>& settled = cached->settled;
    if (settled && !version.empty() && settled->resource_version == version && !settled->digest.empty()) {
      report.results[uid] = NodeResult{settled->digest, false, 0, "", false};
    }
  }
  auto snapshot = views.Latest();
  if (!snapshot.ok()) return report;
  const std::string id = pipeline.config.ref.Id();
  for (const SharedSnapshotObject& object : (*snapshot)->objects) {
    if (object->resource != id) continue;
    for (const SnapshotHandler& h : object->handlers) {
      if (!IsFailing(h)) continue;
      std::string uid = object->uid.str();
      if (report.known.count(uid)) {
        report.results[uid] = NodeResult{h.target, true, 0, std::string(h.handler) + ": " + h.last_message, false};
      }
      break;
    }
  }
  return report;
}

Readiness::Readiness(const Config& config, KubeClient& client,
                     const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines, const ObjectViewsPublisher& views,
                     const ModeSet& modes) {
  for (const auto& p : pipelines) {
    const ResourcePipeline* pipeline = p.get();
    const WatchedResource& r = pipeline->config;
    if (r.ready_condition.empty()) continue;
    NodeReadyReporterOptions options;
    options.node = config.node_name;
    options.namespace_name = config.tuning.lease_namespace;
    options.report = [pipeline, &views] { return ReportOf(*pipeline, views); };
    options.presence = [&modes] { return modes.Presence(); };
    reporters_.push_back(std::make_unique<NodeReadyReporter>(r, client, MonotonicClock::Instance(), ApiServerClock(),
                                                             std::move(options)));
    if (config.tuning.cross_node_writes == "steward") continue;
    ReadyCoordinationOptions writer;
    writer.election = modes.election_options();
    // Every agent is a candidate: each attempt is one read per agent, so they try every four leases.
    writer.election.acquire_period = writer.election.lease_duration * 4;
    writer.watch = TunedWatchOptions(config);
    writer.namespace_name = config.tuning.lease_namespace;
    writers_.push_back(std::make_unique<ReadyCoordination>(r, client, MonotonicClock::Instance(), std::move(writer)));
  }
}

void Readiness::Start(std::vector<std::thread>& threads, const CancelToken& stop) {
  for (auto& r : reporters_) threads.push_back(NamedThread("nh-ready", [&r, &stop] { r->Run(stop); }));
  for (auto& w : writers_) threads.push_back(NamedThread("nh-ready-writer", [&w, &stop] { w->Run(stop); }));
}

}  // namespace nodehook
