#include "agent/finalizers/finalizer_edit.h"

#include <algorithm>

#include "agent/base/log.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

// Each retry follows a fresh read, so only agents racing on the same list collide again; a few
// rounds settle any realistic number of agents finishing at the same moment, and a caller that
// still gets kConflict simply tries again later.
constexpr int kMaxAttempts = 8;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

bool IsConcurrentFinalizerChange(const Status& st) {
  if (st.code() == StatusCode::kConflict) return true;
  // The API server answers a failed JSON-patch "test" with a bare 422 ("the server rejected our
  // request due to an error in our request"). Every finalizer patch starts with a test, so a 422
  // is taken as the list having changed: the re-read object decides what to do (Claim stops when
  // the fresh object is being deleted), and the attempts are bounded.
  return st.code() == StatusCode::kInvalid && st.message().find("HTTP 422") != std::string::npos;
}

Status EditFinalizers(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                      const ObjectFacts& facts, const FinalizerPatchFor& patch_for) {
  ObjectRef ref{resource.ref, object.meta.namespace_name, object.meta.name};
  KubeObject current = object;
  if (!facts.finalizers_readable.ok()) return facts.finalizers_readable;
  std::vector<std::string> list = facts.finalizers;
  for (int attempt = 1;; ++attempt) {
    auto patch = patch_for(list, current);
    if (!patch.ok()) return patch.status();
    if (patch->empty()) return Status::Ok();
    Status st = client.Patch(ref, PatchType::kJson, *patch);
    if (st.ok() || !IsConcurrentFinalizerChange(st)) return st;
    if (attempt == kMaxAttempts) return Status(StatusCode::kConflict, "finalizer list kept changing: " + st.message());
    Log(LogLevel::kInfo, "finalizer list changed concurrently",
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"attempt", attempt},
         {"next", "re-read the object and retry"}});
    auto fresh = client.Get(ref);
    if (!fresh.ok()) return fresh.status();
    if (fresh->meta.uid != object.meta.uid) return NotFoundError("replaced by a new object of the same name");
    current = std::move(fresh).value();
    auto fresh_list = ReadFinalizers(current.json);  // a new version: its one parse
    if (!fresh_list.ok()) return fresh_list.status();
    list = std::move(fresh_list).value();
  }
}

Status ClaimFinalizer(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                      const ObjectFacts& facts, const std::string& finalizer) {
  Status st = EditFinalizers(client, resource, object, facts,
                             [&](const std::vector<std::string>& current, const KubeObject& o) -> Result<std::string> {
                               if (Contains(current, finalizer)) return std::string();
                               if (o.meta.deleting) {
                                 return Status(StatusCode::kConflict, "being deleted: no finalizer can be added");
                               }
                               return AddFinalizerPatch(current, o.meta.resource_version, finalizer);
                             });
  if (!st.ok()) {
    Log(LogLevel::kWarn, "finalizer not added",
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", finalizer}, {"error", st.ToString()},
         {"next", "hold the hook back; retry with the object the watch brings"}});
  }
  return st;
}

Status ReleaseFinalizer(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                        const ObjectFacts& facts, const std::string& finalizer, const AlsoOnRelease& also) {
  bool removed = false;
  Status st = EditFinalizers(client, resource, object, facts,
                             [&](const std::vector<std::string>& current, const KubeObject& o) -> Result<std::string> {
                               std::string patch = RemoveFinalizerPatch(current, finalizer);
                               removed = !patch.empty();
                               if (removed && also) patch.insert(patch.size() - 1, also(o));  // before the "]"
                               return patch;
                             });
  if (st.code() == StatusCode::kNotFound) return Status::Ok();  // the object is gone: nothing holds it
  if (st.ok() && !removed) return st;                             // it was already off
  Log(st.ok() ? LogLevel::kInfo : LogLevel::kWarn, st.ok() ? "finalizer removed" : "finalizer not removed",
      {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", finalizer}, {"error", st.ToString()},
       {"next", st.ok() ? "forget the object" : "retry the removal later; the delete hook is not run again"}});
  return st;
}

}  // namespace nodehook
