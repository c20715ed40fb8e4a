#include "agent/watch/watch_metrics.h"

#include <cstring>

namespace nodehook {
namespace {

const char* const kStates[] = {"empty", "listed", "watching"};

}  // namespace

WatchMetrics::WatchMetrics(Metrics* metrics, std::string resource) : metrics_(metrics), resource_(std::move(resource)) {
  if (!metrics_) return;
  relists_ = &metrics_->GetCounter("watch_relists_total",
                                   "Full lists after the first one (resource version expired, periodic resync, "
                                   "a malformed watch line)",
                                   {{"resource", resource_}});
  for (size_t i = 0; i < 3; ++i) {
    states_[i] = &metrics_->GetGauge("watch_state", "1 for the state the resource's list/watch loop is in",
                                     {{"resource", resource_}, {"state", kStates[i]}});
  }
  Served(true);
  // Every cause at zero from the start, so the first restart shows as an increase.
  for (const char* cause : {"timeout", "stall", "expired", "error"}) Restarts(cause);
}

WatchMetrics::~WatchMetrics() {
  if (metrics_ && collector_ != 0) metrics_->RemoveCollector(collector_);
}

void WatchMetrics::WatchActivity(std::function<double()> seconds_since_activity) {
  if (!metrics_) return;
  collector_ = metrics_->AddCollector([this, probe = std::move(seconds_since_activity)](Metrics& m) {
    m.GetGauge("watch_seconds_since_activity", "Seconds since the last list, watch event or bookmark",
               {{"resource", resource_}})
        .Set(probe());
  });
}

void WatchMetrics::Served(bool served) {
  if (!metrics_) return;
  metrics_->GetGauge("watch_resource_served",
                     "0 while the API server answers 404 for the resource's collection (its CRD not installed "
                     "yet), else 1",
                     {{"resource", resource_}})
      .Set(served ? 1 : 0);
}

void WatchMetrics::EnteredState(const char* state) {
  for (size_t i = 0; i < 3; ++i) {
    if (states_[i]) states_[i]->Set(std::strcmp(state, kStates[i]) == 0 ? 1 : 0);
  }
}

void WatchMetrics::Restarted(const char* cause) {
  if (metrics_) Restarts(cause).Increment();
}

Counter& WatchMetrics::Restarts(const char* cause) {
  return metrics_
      ->GetCounter("watch_restarts_total",
                   "Watches that ended and were reopened, by cause: timeout (server-side timeoutSeconds), stall "
                   "(silent for stall_seconds), expired (410 Gone: relist), error",
                   {{"resource", resource_}, {"cause", cause}});
}

}  // namespace nodehook
