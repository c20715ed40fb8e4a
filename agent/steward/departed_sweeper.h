// DepartedSweeper: the steward's part of finalizer mode for one resource. As a WatchSink of the
// resource it keeps the deleting objects that carry some node's finalizer (nodehook.io/<node>, not
// the singleton's), and sweeps each (FinalizerSteps::SweepDeparted: each node confirmed gone, long
// unready, or without an agent, by a fresh read) when it changes, when Wake() says a node
// departed, and again every `recheck` while such a finalizer stays (a live node's stays until it
// ran its delete hook; a node's agent may leave later). Sweeping only reads unless a node left.
// Thread-safe: the watch feeds it from one thread, Run() sweeps on another.
#pragma once

#include <condition_variable>
#include <map>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/config/config.h"
#include "agent/object/object_facts.h"
#include "agent/reconcile/finalizer_steps.h"
#include "agent/watch/watcher.h"

namespace nodehook {

class DepartedSweeper final : public WatchSink {
 public:
  // All borrowed, outliving this.
  DepartedSweeper(const WatchedResource& resource, FinalizerSteps& finalizers, Clock& clock, Duration recheck);

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override;
  void OnQuarantined(const BadObject&, WatchEventType) override {}
  void OnObject(ObjectPtr object) override;
  void OnDeleted(ObjectPtr last_state) override;

  // Every kept object is due now (a node departed, or its agent left).
  void Wake();
  // Sweeps what is due until `stop`.
  void Run(const CancelToken& stop);
  // Deleting objects that still carry some node's finalizer.
  size_t pending() const;

 private:
  struct Kept {
    ObjectPtr object;
    FactsPtr facts;  // read once, when the object came
    TimePoint due;
  };
  // Keeps or drops `object`.
  void Keep(const ObjectPtr& object, TimePoint due) REQUIRES(mu_);
  void SweepDue();

  const WatchedResource& resource_;
  FinalizerSteps& finalizers_;
  Clock& clock_;
  const Duration recheck_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Kept> kept_ GUARDED_BY(mu_);  // by uid
  bool woken_ GUARDED_BY(mu_) = false;
};

}  // namespace nodehook
