#include "agent/finalizers/finalizer_keeper.h"

#include <algorithm>
#include <utility>

#include "agent/base/log.h"
#include "agent/finalizers/finalizer_edit.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

const ResourceRef kNodes{"", "v1", "nodes", "", ""};
constexpr const char* kNodeGone = "its Node answered 404 to a fresh read";
constexpr const char* kNodeNotReady = "its Node has not been Ready for ";

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The names of the nodes `finalizer` may be: what the rosters saw (`known`), and the plain
// name it spells out. Empty for a hashed name whose node was never seen: it cannot be checked.
std::vector<std::string> CandidateNodes(const std::string& finalizer, std::vector<std::string> known) {
  std::string plain = PlainNodeName(finalizer);
  if (!plain.empty() && !Contains(known, plain)) known.push_back(plain);
  return known;
}

}  // namespace

FinalizerKeeper::FinalizerKeeper(KubeClient& client, std::string node_name, const NodeRoster* roster,
                                 AgentWatch agents, EventRecorder* events, NotReadyRule not_ready)
    : client_(client),
      node_name_(std::move(node_name)),
      own_(FinalizerName(node_name_)),
      roster_(roster),
      agents_(std::move(agents)),
      events_(events),
      not_ready_(not_ready) {}

Status FinalizerKeeper::Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) {
  return ClaimFinalizer(client_, resource, object, facts, own_);
}

Status FinalizerKeeper::Release(const WatchedResource& resource, const KubeObject& object,
                                const ObjectFacts& facts) {
  return ReleaseFinalizer(client_, resource, object, facts, own_);
}

Result<bool> FinalizerKeeper::ConfirmedGone(const std::string& finalizer) {
  std::vector<std::string> candidates =
      CandidateNodes(finalizer, roster_ ? roster_->NamesFor(finalizer) : std::vector<std::string>());
  if (candidates.empty()) return false;
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
  names = CandidateNodes(finalizer, std::move(names));
  if (names.empty()) return std::string();
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

Result<std::string> FinalizerKeeper::LongNotReady(const std::string& finalizer) {
  if (not_ready_.after <= Duration::zero() || !not_ready_.clock || !roster_) return std::string();
  auto since = roster_->NotReadySince(finalizer);
  if (!since) return std::string();
  Duration unready = not_ready_.clock->Now() - *since;
  if (unready < not_ready_.after) return std::string();  // FireDue requeues it then
  // The watch is only a hint: the Node must still say so now.
  for (const auto& name : roster_->NamesFor(finalizer)) {
    auto node = client_.Get(ObjectRef{kNodes, "", name});
    if (!node.ok() && node.status().code() == StatusCode::kNotFound) continue;
    if (!node.ok()) return node.status();
    if (!NodeNotReady(node->json)) return std::string();
  }
  return kNodeNotReady + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(unready).count()) +
         "s (finalizer_release_not_ready_seconds), confirmed by a fresh read";
}

Result<std::string> FinalizerKeeper::WhyReleasable(const std::string& finalizer) {
  if (!roster_ || !roster_->ShowsOwnerOf(finalizer)) {  // the watch shows its node: no need to ask
    auto gone = ConfirmedGone(finalizer);
    if (!gone.ok()) return gone.status();
    if (*gone) return std::string(kNodeGone);
  }
  auto unready = LongNotReady(finalizer);
  if (!unready.ok() || !unready->empty()) return unready;
  return AgentAway(finalizer);
}

Status FinalizerKeeper::SweepDeparted(const WatchedResource& resource, const KubeObject& object,
                                      const ObjectFacts& facts) {
  if (!facts.finalizers_readable.ok()) return facts.finalizers_readable;
  Status result;
  for (const auto& f : facts.finalizers) {
    // The singleton finalizer is no node's (FinalizerName never gives it to one).
    if (!IsNodehookFinalizer(f) || f == own_ || f == kSingletonFinalizer) continue;
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
    Status st = EditFinalizers(client_, resource, object, facts, remove);
    if (st.code() == StatusCode::kNotFound) return Status::Ok();
    if (st.ok() && !removed) continue;  // another agent took it off first: its log and Event say so
    // Three stable events: the Node is gone, it stays NotReady, or it stays and its agent left.
    std::string event = *why == kNodeGone                  ? "departed node's finalizer"
                        : why->rfind(kNodeNotReady, 0) == 0 ? "unready node's finalizer"
                                                            : "departed agent's finalizer";
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
