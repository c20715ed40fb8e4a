// WatchMetrics: one watched resource's list/watch loop, as Prometheus families (modelled on
// client-go's reflector metrics):
//   nodehook_watch_state{resource,state}               1 for the current state (empty, listed,
//                                                      watching), 0 for the others
//   nodehook_watch_relists_total{resource}             full lists after the first one
//   nodehook_watch_restarts_total{resource,cause}      watches that ended: timeout (the server's
//                                                      timeoutSeconds), stall (silent for the
//                                                      stall window), expired (410), error
//   nodehook_watch_seconds_since_activity{resource}    since the last list, event or bookmark
//                                                      (computed at scrape time)
//   nodehook_watch_resource_served{resource}           0 while the collection answers 404 (no
//                                                      CRD yet), else 1
// A null registry turns every call into a no-op. Owned by one Watcher; thread-safe (atomics; the
// activity probe runs on the scraping thread and must only read atomics).
#pragma once

#include <functional>
#include <string>

#include "agent/base/metrics.h"

namespace nodehook {

class WatchMetrics {
 public:
  WatchMetrics(Metrics* metrics, std::string resource);
  ~WatchMetrics();
  WatchMetrics(const WatchMetrics&) = delete;
  WatchMetrics& operator=(const WatchMetrics&) = delete;

  // Reports `seconds_since_activity()` at every scrape until this object is destroyed.
  void WatchActivity(std::function<double()> seconds_since_activity);

  void EnteredState(const char* state);  // one of the three names WatcherStateName returns
  void Relisted() { if (relists_) relists_->Increment(); }
  // 0 while the API server answers 404 for the collection (the CRD not installed yet), else 1.
  void Served(bool served);
  void Restarted(const char* cause);     // timeout, stall, expired or error

 private:
  Counter& Restarts(const char* cause);

  Metrics* const metrics_;
  const std::string resource_;
  Counter* relists_ = nullptr;
  Gauge* states_[3] = {nullptr, nullptr, nullptr};
  Metrics::CollectorId collector_ = 0;
};

}  // namespace nodehook
