#include "agent/outputs/outputs_recorder.h"

#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {
namespace {

// The kinds given, e.g. "labels,taints".
std::string Kinds(const PublishedOutputs& o) {
  std::string kinds;
  ForEachKind(o, [&kinds](OutputKind kind, const auto& given) {
    if (given) kinds += (kinds.empty() ? "" : ",") + std::string(OutputKindName(kind));
  });
  return kinds;
}

}  // namespace

Status OutputsRecorder::Record(const WatchedResource& resource, const ObjectMeta& object, const std::string& handler,
                               const std::string& node_json) {
  if (node_json.empty()) return Status::Ok();
  Result<PublishedOutputs> published = ParsePublishedOutputs(node_json);
  Status allowed = published.ok() ? CheckPrefixes(*published, resource.node_output_prefixes) : published.status();
  if (allowed.ok() && published->conditions && !resource.node_condition.empty()) {
    for (const OutputCondition& c : *published->conditions) {
      if (c.type != resource.node_condition) continue;
      allowed = InvalidError("conditions: \"" + c.type + "\" is the condition nodehook derives for this resource "
                             "(node_outputs.condition); publish another type");
    }
  }
  if (allowed.ok() && own_) allowed = CheckOwnPodTolerates(*published, *own_);
  if (!allowed.ok()) {
    const std::string message = "node outputs refused: " + allowed.message();
    Log(LogLevel::kWarn, "node outputs refused",
        {{"object", object.Key()}, {"uid", object.uid}, {"handler", handler}, {"error", allowed.message()},
         {"next", "keep what the object published before; fix the hook's \"node\" or the resource's "
                  "node_outputs.prefixes"}});
    events_.OutputsRefused(resource.ref, object, handler, message);
    return allowed;
  }
  Result<std::optional<NodeOutputsRecord>> stored = store_.GetNodeOutputs(object.uid);
  if (!stored.ok()) return Failed(object, handler, stored.status());
  PublishedOutputs before;
  if (stored->has_value()) {
    Result<PublishedOutputs> read = ParsePublishedOutputs((*stored)->outputs);
    if (read.ok()) before = *read;  // an unreadable record is replaced whole
  }
  const PublishedOutputs after = MergeOutputs(before, *published);
  if (after == before && stored->has_value()) return Status::Ok();
  Status put = store_.PutNodeOutputs(NodeOutputsRecord{object.uid, resource.ref.Id(), object.namespace_name,
                                                       object.name, OutputsJson(after), ToMillis(clock_.Now())});
  if (!put.ok()) return Failed(object, handler, put);
  Log(LogLevel::kInfo, "node outputs recorded",
      {{"object", object.Key()}, {"uid", object.uid}, {"handler", handler}, {"kinds", Kinds(*published)},
       {"next", "the writer puts them on this Node at its next round"}});
  return Status::Ok();
}

Status OutputsRecorder::Failed(const ObjectMeta& object, const std::string& handler, const Status& status) {
  Log(LogLevel::kError, "node outputs not recorded",
      {{"object", object.Key()}, {"uid", object.uid}, {"handler", handler}, {"error", status.ToString()},
       {"next", "the Node keeps what was recorded before until the hook publishes them again"}});
  return status;
}

}  // namespace nodehook
