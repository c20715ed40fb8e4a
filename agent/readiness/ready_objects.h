// ReadyObjects: the objects of a resource with a ready_condition as its writer's watch brings
// them (a WatchSink): for each, what the condition needs (its state digest, node selector and
// generation) and the condition it carries now. Each version is read once, on arrival.
// Thread-safe; borrows the resource.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/config/config.h"
#include "agent/readiness/ready_judge.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct ReadyObjectView {
  ObjectPtr object;         // as last seen (its bytes: the other conditions a write keeps)
  RolloutObject target;     // uid, state digest, selector
  int64_t generation = 0;
  std::optional<KeptCondition> kept;  // its condition of the type now
  bool readable = true;     // false: its essence could not be read (never judged)
  // Why what lies at node_selector_path is no selector ("" when it is one, or absent): no node
  // acts on such an object (targeting/kube_node_targeting.h).
  std::string unreadable_selector{};
};

class ReadyObjects final : public WatchSink {
 public:
  explicit ReadyObjects(const WatchedResource& resource) : resource_(resource) {}

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnQuarantined(const BadObject&, WatchEventType) override {}
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;

  // Called after each change, outside the lock (the writer judges again). Set before the watch runs.
  void SetOnChange(std::function<void()> fn) { on_change_ = std::move(fn); }

  bool listed() const;
  std::vector<ReadyObjectView> Snapshot() const;

 private:
  ReadyObjectView Read(ObjectPtr object) const;

  const WatchedResource& resource_;
  std::function<void()> on_change_;
  mutable Mutex mu_;
  std::map<std::string, ReadyObjectView> objects_ GUARDED_BY(mu_);
  bool listed_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
