#include "agent/queue/work_queue_metrics.h"

namespace nodehook {

QueueMetrics::QueueMetrics(Metrics* metrics) : metrics_(metrics) {
  if (!metrics_) return;
  adds_ = &metrics_->GetCounter("queue_adds_total", "Changes and requests that asked for an object to be looked at");
  retries_ = &metrics_->GetCounter("queue_retries_total", "Objects queued again after a delay (retries, in-progress hooks)");
  depth_ = &metrics_->GetGauge("queue_depth", "Objects ready and waiting for a worker");
  waiting_ = &metrics_->GetGauge("queue_delayed", "Objects waiting for a retry time or the end of a batching window");
  in_flight_ = &metrics_->GetGauge("queue_work_in_progress", "Objects a worker is handling now");
  latency_ = &metrics_->GetHistogram("queue_latency_seconds",
                                     "From the first change seen to a worker taking the object (hook start)");
  work_ = &metrics_->GetHistogram("queue_work_duration_seconds", "How long a worker spent on an object, hooks included");
}

QueueMetrics::~QueueMetrics() {
  if (metrics_ && collector_ != 0) metrics_->RemoveCollector(collector_);
}

void QueueMetrics::WatchInFlight(InFlightProbe probe) {
  if (!metrics_) return;
  collector_ = metrics_->AddCollector([probe = std::move(probe)](Metrics& m) {
    auto [unfinished, longest] = probe();
    m.GetGauge("queue_unfinished_work_seconds", "Seconds of work in progress not yet finished, summed over workers")
        .Set(unfinished);
    m.GetGauge("queue_longest_running_seconds", "How long the longest-running hook (worker) has been running")
        .Set(longest);
  });
}

void QueueMetrics::Depth(size_t ready, size_t waiting, size_t in_flight) {
  if (!metrics_) return;
  depth_->Set(static_cast<double>(ready));
  waiting_->Set(static_cast<double>(waiting));
  in_flight_->Set(static_cast<double>(in_flight));
}

}  // namespace nodehook
