// AgentPodRoster: which nodes this DaemonSet's agent pods are bound to, from a watch of those
// pods (the agent's namespace, the pods' own labels as selector), and since when a node has had
// none. It is what judges "this node is still served": a node whose agent crash-loops keeps its
// pod (bound, only restarting), while a node the DaemonSet left (nodeSelector, taint, uninstall,
// a node handed to another team) loses it even though its Node stays.
//
//   AbsentSince(f)  when the node owning finalizer `f` last lost its last agent pod; for a node
//                   never seen with one, the roster's first list (nothing older is known). None
//                   while a pod is bound there, and always None before the first list: a roster
//                   that has not listed is never taken as "no agent".
//   FireDue(now)    calls on_due(f) once for each finalizer whose node has been without an agent
//                   for `release_after` (a requeue trigger for the objects it holds); driven by
//                   the caller's clock, not a timer of its own. A pod bound there again re-arms it.
// Nothing here is proof: FinalizerKeeper reads the pods afresh before it releases anything.
//
// Thread-safety: the WatchSink methods are called from the pod watcher's thread; the rest is
// thread-safe. on_due runs on FireDue's caller's thread, outside the lock.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/watch/watcher.h"

namespace nodehook {

// spec.nodeName of a Pod's JSON; "" when unbound or unreadable.
std::string PodNodeName(const std::string& pod_json);

class AgentPodRoster final : public WatchSink {
 public:
  AgentPodRoster(const Clock& clock, Duration release_after);

  // Set before the pod watcher starts.
  void SetOnDue(std::function<void(const std::string& finalizer)> on_due);

  Duration release_after() const { return release_after_; }
  // See above. Remembers `finalizer` so FireDue fires for it even if no pod was ever seen there.
  std::optional<TimePoint> AbsentSince(const std::string& finalizer);
  // Names of nodes seen with an agent pod whose finalizer is `finalizer`.
  std::vector<std::string> NamesFor(const std::string& finalizer) const;
  void FireDue(TimePoint now);

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;
  void OnQuarantined(const BadObject& bad, WatchEventType type) override;

 private:
  struct Absence {
    TimePoint since;
    bool fired = false;
  };
  // The pod `uid` is bound to `node` ("" = unbound, or gone).
  void Bind(const std::string& uid, const std::string& node) REQUIRES(mu_);
  void Recount() REQUIRES(mu_);

  const Clock& clock_;
  const Duration release_after_;
  mutable Mutex mu_;
  bool listed_ GUARDED_BY(mu_) = false;
  TimePoint first_listed_ GUARDED_BY(mu_){};
  std::map<std::string, std::string> pods_ GUARDED_BY(mu_);             // uid -> node name
  std::map<std::string, int> bound_ GUARDED_BY(mu_);                     // finalizer -> pods there
  std::map<std::string, std::set<std::string>> names_ GUARDED_BY(mu_);  // finalizer -> node names seen
  std::map<std::string, Absence> absent_ GUARDED_BY(mu_);               // finalizer -> since when
  std::function<void(const std::string&)> on_due_ GUARDED_BY(mu_);
};

}  // namespace nodehook
