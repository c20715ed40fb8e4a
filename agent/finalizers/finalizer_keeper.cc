#include "agent/finalizers/finalizer_keeper.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

// Each retry follows a fresh read, so only agents racing on the same list collide again; a few
// rounds settle any realistic number of agents finishing at the same moment, and a caller that
// still gets kConflict simply tries again later.
constexpr int kMaxAttempts = 8;

const ResourceRef kNodes{"", "v1", "nodes", "", ""};

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

FinalizerKeeper::FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster)
    : client_(client), node_name_(std::move(node_name)), own_(FinalizerName(node_name_)), roster_(roster) {}

Status FinalizerKeeper::Edit(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts,
                             const PatchFor& patch_for) {
  ObjectRef ref{resource.ref, object.meta.namespace_name, object.meta.name};
  KubeObject current = object;
  if (!facts.finalizers_readable.ok()) return facts.finalizers_readable;
  std::vector<std::string> list = facts.finalizers;
  for (int attempt = 1;; ++attempt) {
    auto patch = patch_for(list, current);
    if (!patch.ok()) return patch.status();
    if (patch->empty()) return Status::Ok();
    Status st = client_.Patch(ref, PatchType::kJson, *patch);
    if (st.ok() || !IsConcurrentFinalizerChange(st)) return st;
    if (attempt == kMaxAttempts) return Status(StatusCode::kConflict, "finalizer list kept changing: " + st.message());
    Log(LogLevel::kInfo, "finalizer list changed concurrently",
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"attempt", attempt},
         {"next", "re-read the object and retry"}});
    auto fresh = client_.Get(ref);
    if (!fresh.ok()) return fresh.status();
    if (fresh->meta.uid != object.meta.uid) return NotFoundError("replaced by a new object of the same name");
    current = std::move(fresh).value();
    auto fresh_list = ReadFinalizers(current.json);  // a new version: its one parse
    if (!fresh_list.ok()) return fresh_list.status();
    list = std::move(fresh_list).value();
  }
}

Status FinalizerKeeper::Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) {
  Status st = Edit(resource, object, facts, [&](const std::vector<std::string>& current, const KubeObject& o) -> Result<std::string> {
    if (Contains(current, own_)) return std::string();
    if (o.meta.deleting) return Status(StatusCode::kConflict, "being deleted: no finalizer can be added");
    return AddFinalizerPatch(current, o.meta.resource_version, own_);
  });
  if (!st.ok()) {
    Log(LogLevel::kWarn, "finalizer not added",
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", own_}, {"error", st.ToString()},
         {"next", "hold the hook back; retry with the object the watch brings"}});
  }
  return st;
}

Status FinalizerKeeper::Release(const WatchedResource& resource, const KubeObject& object,
                                const ObjectFacts& facts) {
  bool removed = false;
  Status st = Edit(resource, object, facts, [&](const std::vector<std::string>& current, const KubeObject&) -> Result<std::string> {
    std::string patch = RemoveFinalizerPatch(current, own_);
    removed = !patch.empty();
    return patch;
  });
  if (st.code() == StatusCode::kNotFound) return Status::Ok();  // the object is gone: nothing holds it
  if (st.ok() && !removed) return st;                             // it was already off
  Log(st.ok() ? LogLevel::kInfo : LogLevel::kWarn, st.ok() ? "finalizer removed" : "finalizer not removed",
      {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", own_}, {"error", st.ToString()},
       {"next", st.ok() ? "forget the object" : "retry the removal later; the delete hook is not run again"}});
  return st;
}

Result<bool> FinalizerKeeper::ConfirmedGone(const std::string& finalizer) {
  std::vector<std::string> candidates = roster_ ? roster_->NamesFor(finalizer) : std::vector<std::string>();
  std::string plain = finalizer.substr(std::string(kFinalizerPrefix).size());
  if (FinalizerName(plain) == finalizer && !Contains(candidates, plain)) candidates.push_back(plain);
  if (candidates.empty()) return false;  // a hashed name whose node was never seen: cannot be checked
  for (const auto& name : candidates) {
    auto node = client_.Get(ObjectRef{kNodes, "", name});
    if (node.ok()) return false;
    if (node.status().code() != StatusCode::kNotFound) return node.status();
  }
  return true;
}

Status FinalizerKeeper::SweepDeparted(const WatchedResource& resource, const KubeObject& object,
                                      const ObjectFacts& facts) {
  if (!facts.finalizers_readable.ok()) return facts.finalizers_readable;
  Status result;
  for (const auto& f : facts.finalizers) {
    if (f.rfind(kFinalizerPrefix, 0) != 0 || f == own_) continue;
    if (roster_ && roster_->ShowsOwnerOf(f)) continue;  // the watch shows its node: no need to ask
    auto gone = ConfirmedGone(f);
    if (!gone.ok()) {
      Log(LogLevel::kWarn, "cannot tell whether a node left",
          {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", f},
           {"error", gone.status().ToString()}, {"next", "keep the finalizer; check again later"}});
      result = gone.status();
      continue;
    }
    if (!*gone) continue;
    Status st = Edit(resource, object, facts, [&](const std::vector<std::string>& list, const KubeObject&) -> Result<std::string> {
      return RemoveFinalizerPatch(list, f);
    });
    if (st.code() == StatusCode::kNotFound) return Status::Ok();
    Log(st.ok() ? LogLevel::kInfo : LogLevel::kWarn, st.ok() ? "departed node's finalizer removed" : "departed node's finalizer not removed",
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", f},
         {"reason", "its Node answered 404 to a fresh read"}, {"error", st.ToString()},
         {"next", st.ok() ? "the object can go once the other nodes are done" : "check again later"}});
    if (!st.ok()) result = st;
  }
  return result;
}

}  // namespace nodehook
