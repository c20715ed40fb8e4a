#include "agent/readiness/ready_writer.h"

#include <algorithm>
#include <set>

#include "agent/base/log.h"
#include "agent/base/utc_time.h"

namespace nodehook {

ReadyWriter::ReadyWriter(const WatchedResource& resource, KubeClient& client, Clock& wall, Clock& monotonic)
    : resource_(resource), client_(client), wall_(wall), monotonic_(monotonic) {}

int ReadyWriter::Round(const BoardView& board, const std::vector<ReadyObjectView>& objects) {
  const int before = writes_;
  if (monotonic_.Now() < backoff_until_) return 0;
  std::set<std::string> present;
  for (const ReadyObjectView& view : objects) {
    const std::string& uid = view.target.uid;
    present.insert(uid);
    if (!view.readable || view.object->meta.deleting) continue;
    const ReadyValue wanted = JudgeReady(board, view.target, view.unreadable_selector);
    if (!ReadyNeedsWrite(view.kept, wanted, view.generation)) {
      written_.erase(uid);
      continue;
    }
    auto pending = written_.find(uid);
    if (pending != written_.end() && pending->second.based_on == view.object->meta.resource_version &&
        pending->second.value.status == wanted.status && pending->second.value.reason == wanted.reason &&
        pending->second.generation == view.generation) {
      continue;  // written; the watch has not brought it back yet
    }
    auto refused = refused_.find(uid);
    if (refused != refused_.end() && refused->second == view.object->meta.resource_version) continue;
    if (!Write(view, wanted)) break;
  }
  for (auto it = written_.begin(); it != written_.end();) it = present.count(it->first) ? std::next(it) : written_.erase(it);
  for (auto it = refused_.begin(); it != refused_.end();) it = present.count(it->first) ? std::next(it) : refused_.erase(it);
  return writes_ - before;
}

bool ReadyWriter::Write(const ReadyObjectView& view, const ReadyValue& wanted) {
  const ObjectMeta& meta = view.object->meta;
  auto body = ReadyConditionPatch(view.object->json, resource_.ready_condition, wanted, view.generation,
                                  Rfc3339Millis(wall_.Now()), meta.resource_version);
  Status written = body.ok() ? client_.Patch(ObjectRef{resource_.ref, meta.namespace_name, meta.name, "status"},
                                             PatchType::kMerge, *body)
                             : body.status();
  if (written.ok()) {
    ++writes_;
    written_[meta.uid] = Written{meta.resource_version, wanted, view.generation};
    Log(LogLevel::kInfo, "ready condition set",
        {{"resource", resource_.ref.Id()}, {"object", meta.Key()}, {"uid", meta.uid},
         {"condition", resource_.ready_condition}, {"status", wanted.status}, {"reason", wanted.reason},
         {"message", wanted.message}, {"generation", view.generation},
         {"next", "write it again when its status or reason changes"}});
    backoff_ = Duration{0};
    return true;
  }
  // A 409 (changed meanwhile) or 404 (deleted): the watch brings what happened; judged again then.
  if (written.code() == StatusCode::kConflict || written.code() == StatusCode::kNotFound) return true;
  const bool refused = written.code() == StatusCode::kInvalid || written.code() == StatusCode::kForbidden;
  if (refused) {
    refused_[meta.uid] = meta.resource_version;
  } else {
    backoff_ = std::min<Duration>(std::max<Duration>(backoff_ * 2, std::chrono::seconds(1)), std::chrono::seconds(30));
    backoff_until_ = monotonic_.Now() + backoff_;
  }
  Log(LogLevel::kWarn, "ready condition not written",
      {{"resource", resource_.ref.Id()}, {"object", meta.Key()}, {"uid", meta.uid},
       {"condition", resource_.ready_condition}, {"error", written.ToString()},
       {"next", refused ? "try again when the object changes or another writer starts"
                        : "try again in " + std::to_string(backoff_.count()) + " ms"}});
  return refused;
}

}  // namespace nodehook
