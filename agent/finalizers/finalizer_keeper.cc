#include "agent/finalizers/finalizer_keeper.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"
#include "agent/finalizers/finalizer_edit.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

const ResourceRef kNodes{"", "v1", "nodes", "", ""};

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

FinalizerKeeper::FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster)
    : client_(client), node_name_(std::move(node_name)), own_(FinalizerName(node_name_)), roster_(roster) {}

Status FinalizerKeeper::Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) {
  return ClaimFinalizer(client_, resource, object, facts, own_);
}

Status FinalizerKeeper::Release(const WatchedResource& resource, const KubeObject& object,
                                const ObjectFacts& facts) {
  return ReleaseFinalizer(client_, resource, object, facts, own_);
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
    // The singleton finalizer is no node's (FinalizerName never gives it to one).
    if (f.rfind(kFinalizerPrefix, 0) != 0 || f == own_ || f == kSingletonFinalizer) continue;
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
    Status st = EditFinalizers(client_, resource, object, facts, [&](const std::vector<std::string>& list, const KubeObject&) -> Result<std::string> {
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
