// This node's labels, as the agent last saw them on its own Node object (issue 4, node targeting),
// and whether that Node is there (rollouts: a node whose Node is deleted has left the fleet).
//
// NodeLabels holds them for the workers that ask whether an object targets this node; a
// NodeLabelsSink keeps it current from a standard Watcher on the Node:
//   ResourceRef nodes{"", "v1", "nodes", "", ""};
//   nodes.field_selector = "metadata.name=" + node_name;
//
// Until the Node has been listed, and after it is deleted, the labels are *unknown*: then no
// object with a node selector targets this node (objects without one still do).
//
// Thread-safety: NodeLabels is thread-safe. The on-change callback runs on the thread that made
// the change (the Node watcher's), outside the lock, once per change. NodeLabelsSink is called
// from the watcher's thread only, as every WatchSink is. Ownership: the sink refers to a
// NodeLabels it does not own, which must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "agent/base/mutex.h"
#include "agent/base/status.h"
#include "agent/object/object_facts.h"  // LabelMap
#include "agent/watch/watcher.h"

namespace nodehook {


// Whether this node's Node object is there: its uid while it is, and `gone` once it was seen and
// then deleted (or missing from a later list). Never seen: neither.
struct NodeIdentity {
  std::string uid;
  bool gone = false;
};

class NodeLabels {
 public:
  // Called after every change with the new version. Set before the Node watcher starts.
  void SetOnChange(std::function<void(uint64_t version)> on_change);

  // Replaces the labels (now known) and the Node's uid. No version bump or callback when the
  // labels did not change.
  void Set(LabelMap labels, std::string uid = {});
  // The Node is gone: labels unknown again.
  void Clear();

  // The labels, or nullopt while unknown.
  std::optional<LabelMap> Get() const;
  NodeIdentity Identity() const;
  // Counts changes, starting at 0 (unknown, never set).
  uint64_t version() const;
  // True when the labels are known and every key of `selector` has the same value among them.
  // An empty selector matches known labels.
  bool Matches(const LabelMap& selector) const;

 private:
  // Counts a change; returns the call of the change callback, made once mu_ is released (the
  // callback may ask for the labels).
  std::function<void()> ChangedLocked() REQUIRES(mu_);

  mutable Mutex mu_;
  std::optional<LabelMap> labels_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 0;
  std::string uid_ GUARDED_BY(mu_);  // "" while the Node is not known
  bool seen_ GUARDED_BY(mu_) = false;  // the Node was known once
  std::function<void(uint64_t)> on_change_ GUARDED_BY(mu_);
};

// metadata.labels of an object's JSON; an object without labels has none.
// kInvalid when the text is not a JSON object or labels is not a map of strings.
Result<LabelMap> ParseObjectLabels(const std::string& json);

// Feeds NodeLabels from a Watcher on this node's Node object. Objects of other names are
// ignored, so it is also correct without a field selector.
class NodeLabelsSink final : public WatchSink {
 public:
  NodeLabelsSink(std::string node_name, NodeLabels& labels);

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;
  // The Node could not be read: its labels stay as they were.
  void OnQuarantined(const BadObject& bad, WatchEventType type) override;

 private:
  void Update(const KubeObject& node);
  void Forget(const char* why);

  const std::string node_name_;
  NodeLabels& labels_;
  bool missing_reported_ = false;  // "unknown" was logged since the Node was last seen
};

}  // namespace nodehook
