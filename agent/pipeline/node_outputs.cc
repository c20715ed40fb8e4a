#include "agent/pipeline/node_outputs.h"

#include <memory>
#include <set>
#include <sstream>

#include "agent/base/log.h"

namespace nodehook {

ResourceProgress ProgressOf(const ResourcePipeline& pipeline) {
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
    if (version.empty() || !cached->settled || cached->settled->resource_version != version) ++progress.unsettled;
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

std::set<std::string> ReadLines(StateStore& store, const char* key) {
  Result<std::optional<std::string>> note = store.ReadNote(key);
  return note.ok() ? Lines(note->value_or("")) : std::set<std::string>{};
}

void NoteLines(StateStore& store, const char* key, const std::set<std::string>& lines) {
  Status written = store.WriteNote(key, Joined(lines));
  if (!written.ok()) {
    Log(LogLevel::kWarn, "node output managers not recorded",
        {{"error", written.ToString()}, {"next", "retire them again at the next start (harmless)"}});
  }
}

// What the writer told of its managers (the writer's thread only).
struct ManagerSets {
  std::set<std::string> idle;      // hold nothing on the Node
  std::set<std::string> metadata;  // applied the Node itself
};

std::string TaintsNoteKey(const std::string& manager) { return std::string(kNodeOutputTaintsNote) + manager; }

// The union of what `pipeline`'s objects published, from the store; a change in the objects
// that contest a key is logged once.
std::function<Result<PublishedOutputs>()> PublishedBy(const ResourcePipeline& pipeline, StateStore& store) {
  const ResourceScope scope(pipeline.config.ref);
  const std::vector<std::string> prefixes = pipeline.config.node_output_prefixes;
  auto reported = std::make_shared<std::vector<std::string>>();  // the writer's thread only
  return [&store, scope, prefixes, reported]() -> Result<PublishedOutputs> {
    Result<std::vector<NodeOutputsRecord>> records = store.ListNodeOutputs(scope.id());
    if (!records.ok()) return records.status();
    std::vector<ObjectOutputs> objects;
    for (const NodeOutputsRecord& r : *records) {
      if (!scope.Holds(r.resource, r.namespace_name)) continue;  // the resource's entry in another namespace
      Result<PublishedOutputs> parsed = ParsePublishedOutputs(r.outputs);
      if (parsed.ok()) objects.push_back({r.namespace_name.empty() ? r.name : r.namespace_name + "/" + r.name, *parsed});
    }
    std::vector<std::string> conflicts;
    PublishedOutputs all = UnionOf(objects, prefixes, &conflicts);
    if (conflicts != *reported) {
      for (const std::string& c : conflicts) {
        Log(LogLevel::kWarn, "node outputs conflict",
            {{"resource", scope.id()}, {"conflict", c}, {"next", "keep the first object's; fix the hooks to publish one value"}});
      }
      *reported = conflicts;
    }
    return all;
  };
}


// The node outputs of each resource that keeps them; `managers` gets their field managers.
std::vector<NodeOutputsSource> SourcesOf(const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
                                         const ObjectViewsPublisher& views, StateStore& store,
                                         std::set<std::string>* managers) {
  std::vector<NodeOutputsSource> sources;
  for (const auto& p : pipelines) {
    if (p->config.node_condition.empty() && p->config.node_output_prefixes.empty()) continue;
    const ResourcePipeline* pipeline = p.get();
    const ResourceScope scope(pipeline->config.ref);
    managers->insert(NodeOutputsManager(pipeline->config.ref));
    NodeOutputsSource source{pipeline->config.ref, pipeline->config.node_condition, nullptr, nullptr};
    if (!source.condition.empty()) {
      source.derive = [pipeline, scope, &views] {
        Result<ObjectViewsPtr> snapshot = views.Latest();
        if (!snapshot.ok()) return DeriveNodeCondition(scope, {}, ResourceProgress{});  // not read yet: starting
        return DeriveNodeCondition(scope, (*snapshot)->objects, ProgressOf(*pipeline));
      };
    }
    if (!pipeline->config.node_output_prefixes.empty()) source.published = PublishedBy(*pipeline, store);
    sources.push_back(std::move(source));
  }
  return sources;
}

// The writer's notes in the state file: the taints each manager put on the Node, whether each
// holds anything and applied the Node, and the managers left once one is retired.
void KeepNotes(NodeOutputsWriterOptions& options, StateStore& store, const std::set<std::string>& noted,
               const std::shared_ptr<ManagerSets>& idle) {
  for (const std::string& manager : noted) {
    Result<std::optional<std::string>> taints = store.ReadNote(TaintsNoteKey(manager));
    if (!taints.ok() || !taints->has_value()) continue;
    Result<PublishedOutputs> parsed = ParsePublishedOutputs(**taints);
    if (parsed.ok() && parsed->taints) options.noted_taints[manager] = *parsed->taints;
  }
  options.metadata_managers = idle->metadata;
  options.note_taints = [&store](const std::string& manager, const std::vector<OutputTaint>& taints) {
    PublishedOutputs only;
    only.taints = taints;
    const std::string text = OutputsJson(only);
    Status written = store.WriteNote(TaintsNoteKey(manager), text.empty() ? "{}" : text);
    if (!written.ok()) {
      Log(LogLevel::kWarn, "node output taints not recorded",
          {{"manager", manager}, {"error", written.ToString()},
           {"next", "a later start may leave these taints on the Node: take them off by hand if the resource left"}});
    }
  };
  options.noted = [&store, idle](const std::string& manager, bool holds, bool applied_metadata) {
    const ManagerSets before = *idle;
    if (holds) {
      idle->idle.erase(manager);
    } else {
      idle->idle.insert(manager);
    }
    if (applied_metadata) idle->metadata.insert(manager);
    if (idle->idle != before.idle) NoteLines(store, kNodeOutputIdleNote, idle->idle);
    if (idle->metadata != before.metadata) NoteLines(store, kNodeOutputMetadataNote, idle->metadata);
  };
  options.retired = [&store, left = noted, idle](const std::string& manager) mutable {
    left.erase(manager);
    if (idle->metadata.erase(manager) > 0) NoteLines(store, kNodeOutputMetadataNote, idle->metadata);
    NoteLines(store, kNodeOutputManagersNote, left);
  };
}

}  // namespace

std::unique_ptr<NodeOutputsWriter> MakeNodeOutputsWriter(
    const Config& config, KubeClient& client, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
    const ObjectViewsPublisher& views, StateStore& store, Clock& clock) {
  std::set<std::string> managers;
  std::vector<NodeOutputsSource> sources = SourcesOf(pipelines, views, store, &managers);
  Result<std::optional<std::string>> note = store.ReadNote(kNodeOutputManagersNote);
  if (!note.ok()) {
    Log(LogLevel::kWarn, "node output managers not read",
        {{"error", note.status().ToString()}, {"next", "retire only the managers this Node names"}});
  }
  const std::set<std::string> recorded = note.ok() ? Lines(note->value_or("")) : std::set<std::string>{};
  auto idle = std::make_shared<ManagerSets>(ManagerSets{ReadLines(store, kNodeOutputIdleNote),
                                                        ReadLines(store, kNodeOutputMetadataNote)});
  NodeOutputsWriterOptions options;
  // Noted before the first apply, so a manager is never used without the note knowing it.
  std::set<std::string> noted = managers;
  for (const std::string& m : recorded) {
    if (managers.count(m) > 0) continue;
    // One that held nothing when its resource last ran needs no retirement, and no API call.
    if (idle->idle.count(m) > 0) continue;
    options.retire.push_back(m);
    noted.insert(m);
  }
  if (note.ok() && noted != recorded) NoteLines(store, kNodeOutputManagersNote, noted);
  if (sources.empty() && options.retire.empty()) return nullptr;
  KeepNotes(options, store, noted, idle);
  options.recheck = kNodeOutputsRecheck;
  return std::make_unique<NodeOutputsWriter>(client, config.node_name, std::move(sources), clock, clock,
                                             std::move(options));
}

}  // namespace nodehook
