#include "agent/pipeline/node_outputs.h"

#include <set>
#include <sstream>

#include "agent/base/log.h"

namespace nodehook {

ResourceProgress ProgressOf(const ResourcePipeline& pipeline, const Reconciler& reconciler) {
  ResourceProgress progress;
  progress.synced = pipeline.watcher.synced();
  const ObjectCache& cache = pipeline.tracker.cache();
  for (const std::string& uid : cache.Uids()) {
    std::optional<CachedObject> cached = cache.Get(uid);
    if (!cached) continue;
    if (cached->gone) {  // its delete hook is still owed
      ++progress.objects, ++progress.unsettled;
      continue;
    }
    std::string version;
    if (cached->object) {
      // An object this node does not act on (node targeting) is no part of its condition.
      if (!cached->facts || !pipeline.context.targeting.Matches(pipeline.config, *cached->object, *cached->facts)) {
        continue;
      }
      version = cached->object->meta.resource_version;
    } else if (cached->handled_meta) {
      version = cached->handled_meta->resource_version;
    }
    ++progress.objects;
    if (version.empty() || reconciler.SettledVersion(uid) != version) ++progress.unsettled;
  }
  return progress;
}

namespace {

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

std::string Joined(const std::set<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

}  // namespace

std::unique_ptr<NodeConditionWriter> MakeNodeConditionWriter(
    const Config& config, KubeClient& client, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
    const Reconciler& reconciler, const ObjectViewsPublisher& views, StateStore& store, Clock& clock) {
  std::vector<NodeConditionSource> sources;
  std::set<std::string> managers;
  for (const auto& p : pipelines) {
    if (p->config.node_condition.empty()) continue;
    const ResourcePipeline* pipeline = p.get();
    const std::string id = pipeline->config.ref.Id();
    managers.insert(NodeConditionManager(pipeline->config.ref));
    sources.push_back(NodeConditionSource{
        pipeline->config.ref, pipeline->config.node_condition, [pipeline, id, &reconciler, &views] {
          Result<ObjectViewsPtr> snapshot = views.Latest();
          if (!snapshot.ok()) return DeriveNodeCondition(id, {}, ResourceProgress{});  // not read yet: starting
          return DeriveNodeCondition(id, (*snapshot)->objects, ProgressOf(*pipeline, reconciler));
        }});
  }
  Result<std::optional<std::string>> note = store.ReadNote(kNodeOutputManagersNote);
  if (!note.ok()) {
    Log(LogLevel::kWarn, "node output managers not read",
        {{"error", note.status().ToString()}, {"next", "retire only the managers this Node names"}});
  }
  const std::set<std::string> recorded = note.ok() ? Lines(note->value_or("")) : std::set<std::string>{};
  NodeConditionWriterOptions options;
  for (const std::string& m : recorded) {
    if (managers.count(m) == 0) options.retire.push_back(m);
  }
  if (sources.empty() && options.retire.empty()) return nullptr;
  // Noted before the first apply, so a manager is never used without the note knowing it.
  std::set<std::string> noted = recorded;
  noted.insert(managers.begin(), managers.end());
  if (noted != recorded) {
    Status written = store.WriteNote(kNodeOutputManagersNote, Joined(noted));
    if (!written.ok()) {
      Log(LogLevel::kWarn, "node output managers not recorded",
          {{"error", written.ToString()}, {"next", "the Node's managedFields still name them for a later retirement"}});
    }
  }
  options.retired = [&store, noted](const std::string& manager) mutable {
    noted.erase(manager);
    Status written = store.WriteNote(kNodeOutputManagersNote, Joined(noted));
    if (!written.ok()) {
      Log(LogLevel::kWarn, "node output managers not recorded",
          {{"error", written.ToString()}, {"next", "retire " + manager + " again at the next start (harmless)"}});
    }
  };
  return std::make_unique<NodeConditionWriter>(client, config.node_name, std::move(sources), clock, clock,
                                               std::move(options));
}

}  // namespace nodehook
