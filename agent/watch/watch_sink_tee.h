// WatchSinkTee: hands everything one Watcher learns to several sinks, in order, so one Node
// watch serves both node targeting (NodeLabelsSink) and finalizer mode (NodeRoster).
// Called from the watcher's thread only, as every WatchSink; borrows sinks that must outlive it.
#pragma once

#include <vector>

#include "agent/watch/watcher.h"

namespace nodehook {

class WatchSinkTee final : public WatchSink {
 public:
  explicit WatchSinkTee(std::vector<WatchSink*> sinks) : sinks_(std::move(sinks)) {}

  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override {
    for (WatchSink* s : sinks_) s->OnListed(items, quarantined);
  }
  void OnQuarantined(const BadObject& bad, WatchEventType type) override {
    for (WatchSink* s : sinks_) s->OnQuarantined(bad, type);
  }
  void OnObject(ObjectPtr object) override {
    for (WatchSink* s : sinks_) s->OnObject(object);
  }
  void OnDeleted(ObjectPtr last_state) override {
    for (WatchSink* s : sinks_) s->OnDeleted(last_state);
  }

 private:
  const std::vector<WatchSink*> sinks_;
};

}  // namespace nodehook
