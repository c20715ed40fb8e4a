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
constexpr const char* kNodeGone = "its Node answered 404 to a fresh read";

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

FinalizerKeeper::FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster,
                                 AgentWatch agents, EventRecorder* events)
    : client_(client),
      node_name_(std::move(node_name)),
      own_(FinalizerName(node_name_)),
      roster_(roster),
      agents_(std::move(agents)),
      events_(events) {}

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

Result<std::string> FinalizerKeeper::AgentAway(const std::string& finalizer) {
  if (!agents_.roster || !agents_.clock) return std::string();
  auto since = agents_.roster->AbsentSince(finalizer);
  if (!since) return std::string();  // a pod is bound there, or the pods were never listed
  Duration absent = agents_.clock->Now() - *since;
  if (absent < agents_.roster->release_after()) return std::string();  // FireDue requeues it then
  // The roster is only a hint: never release on a watch that may be stale.
  if (!agents_.healthy || !agents_.healthy()) return UnavailableError("the agent pod watch is not healthy");
  std::vector<std::string> names = agents_.roster->NamesFor(finalizer);
  if (roster_) {
    for (const auto& n : roster_->NamesFor(finalizer)) {
      if (!Contains(names, n)) names.push_back(n);
    }
  }
  std::string plain = finalizer.substr(std::string(kFinalizerPrefix).size());
  if (FinalizerName(plain) == finalizer && !Contains(names, plain)) names.push_back(plain);
  if (names.empty()) return std::string();  // a hashed name whose node was never seen: cannot be checked
  for (const auto& name : names) {
    ResourceRef on_node = agents_.pods;
    on_node.field_selector = "spec.nodeName=" + name;
    auto pods = client_.List(on_node, ListOptions{});
    if (!pods.ok()) return pods.status();
    if (!pods->items.empty() || !pods->quarantined.empty()) return std::string();  // bound again
  }
  return "no agent pod bound to its node for " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(absent).count()) +
         "s (finalizer_release_after_seconds), confirmed by a fresh list";
}

Result<std::string> FinalizerKeeper::WhyReleasable(const std::string& finalizer) {
  if (!roster_ || !roster_->ShowsOwnerOf(finalizer)) {  // the watch shows its node: no need to ask
    auto gone = ConfirmedGone(finalizer);
    if (!gone.ok()) return gone.status();
    if (*gone) return std::string(kNodeGone);
  }
  return AgentAway(finalizer);
}

Status FinalizerKeeper::SweepDeparted(const WatchedResource& resource, const KubeObject& object,
                                      const ObjectFacts& facts) {
  if (!facts.finalizers_readable.ok()) return facts.finalizers_readable;
  Status result;
  for (const auto& f : facts.finalizers) {
    if (f.rfind(kFinalizerPrefix, 0) != 0 || f == own_) continue;
    auto why = WhyReleasable(f);
    if (!why.ok()) {
      Log(LogLevel::kWarn, "cannot tell whether a node left",
          {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", f},
           {"error", why.status().ToString()}, {"next", "keep the finalizer; check again later"}});
      result = why.status();
      continue;
    }
    if (why->empty()) continue;
    bool removed = false;
    auto remove = [&](const std::vector<std::string>& list, const KubeObject&) -> Result<std::string> {
      std::string patch = RemoveFinalizerPatch(list, f);
      removed = !patch.empty();
      return patch;
    };
    Status st = Edit(resource, object, facts, remove);
    if (st.code() == StatusCode::kNotFound) return Status::Ok();
    if (st.ok() && !removed) continue;  // another agent took it off first: its log and Event say so
    // Two stable events: the Node is gone, or the Node stays and its agent left.
    bool node_gone = *why == kNodeGone;
    std::string event = node_gone ? "departed node's finalizer" : "departed agent's finalizer";
    Log(st.ok() ? LogLevel::kInfo : LogLevel::kWarn, event + (st.ok() ? " removed" : " not removed"),
        {{"object", object.meta.Key()}, {"uid", object.meta.uid}, {"finalizer", f},
         {"reason", *why}, {"error", st.ToString()},
         {"next", st.ok() ? "the object can go once the other nodes are done" : "check again later"}});
    if (st.ok() && events_) events_->FinalizerReleased(resource.ref, object.meta, f, *why);
    if (!st.ok()) result = st;
  }
  return result;
}

}  // namespace nodehook
