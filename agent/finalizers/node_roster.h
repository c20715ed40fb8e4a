// NodeRoster: which Nodes the cluster-wide Node watch currently shows, and which just left.
//
// Finalizer mode uses it in two ways:
//   - a hint: a finalizer whose node the watch shows is not looked at further (no API call);
//     one whose node it does not show is only a *candidate* for removal, to be confirmed by a
//     fresh GET of the Node (FinalizerKeeper), because the watch may lag behind a node that
//     just joined;
//   - a trigger: a Node that leaves (DELETED event, or absent from a relist that follows an
//     earlier list) calls the on-departed callback, so objects still being deleted that carry
//     that node's finalizer are looked at again at once instead of at their next change.
// It also remembers the names of nodes that left (bounded), so a hashed finalizer (node names
// longer than 63 characters) can be traced back to the name to GET; and since when each Node has
// not been Ready (its Ready condition False or Unknown; a Node without one, as on a test API
// server without kubelets, counts as Ready), on the clock given, for the NotReady policy:
// FireDue calls on-departed once for a node NotReady that long (again after it was Ready).
//
// Thread-safety: the WatchSink methods are called from the Node watcher's thread only; the
// queries are thread-safe. The callback runs on the watcher's thread, outside the lock.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/watch/watcher.h"

namespace nodehook {

// Whether a Node's JSON says it is not Ready: a Ready condition whose status is not "True".
bool NodeNotReady(const std::string& node_json);

class NodeRoster final : public WatchSink {
 public:
  // `clock` (may be null: NotReady is not tracked) times NotReadySince.
  explicit NodeRoster(const Clock* clock = nullptr) : clock_(clock) {}

  // Called once per departed node name. Set before the Node watcher starts.
  void SetOnDeparted(std::function<void(const std::string& node_name)> on_departed);

  // True when the watch currently shows a Node of that name.
  bool Present(const std::string& node_name) const;
  // True when the watch currently shows a Node whose finalizer is `finalizer`.
  bool ShowsOwnerOf(const std::string& finalizer) const;
  // Names of Nodes (present, or seen leaving) whose finalizer is `finalizer`.
  std::vector<std::string> NamesFor(const std::string& finalizer) const;
  // Since when the present Node whose finalizer is `finalizer` has been seen not Ready; nullopt
  // when it is Ready, not present, or no clock was given.
  std::optional<TimePoint> NotReadySince(const std::string& finalizer) const;
  // Calls on-departed once for each node not Ready for `after` by `now` (a requeue trigger).
  void FireDue(TimePoint now, Duration after);

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;
  // A Node that cannot be read still exists (kept as present), unless the event deletes it.
  void OnQuarantined(const BadObject& bad, WatchEventType type) override;

 private:
  void Remove(const std::string& name);
  void Departed(const std::vector<std::string>& names);
  void RememberDeparted(const std::string& name) REQUIRES(mu_);
  void Insert(const std::string& name) REQUIRES(mu_);
  void NoteReadiness(const std::string& name, bool not_ready) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, std::string> present_ GUARDED_BY(mu_);      // name -> its finalizer
  std::map<std::string, std::string> by_finalizer_ GUARDED_BY(mu_); // finalizer -> name, present only
  std::deque<std::string> departed_ GUARDED_BY(mu_);  // most recent last, bounded
  std::function<void(const std::string&)> on_departed_ GUARDED_BY(mu_);
  struct Unready {
    TimePoint since;
    bool fired = false;
  };
  const Clock* const clock_;
  std::map<std::string, Unready> not_ready_ GUARDED_BY(mu_);  // by node name, present ones only
};

}  // namespace nodehook
