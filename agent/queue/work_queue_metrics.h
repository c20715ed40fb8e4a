// QueueMetrics: the nodehook_queue_* families, named after client-go's workqueue metrics.
// A null registry disables every call (unit tests of the queue itself). Owned by one WorkQueue;
// thread-safe (metrics are atomics; the in-flight probe is called at scrape time and must lock
// what it reads).
#pragma once

#include <functional>
#include <utility>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"

namespace nodehook {

class QueueMetrics {
 public:
  // (sum of seconds that keys in flight have been processed, the longest of them)
  using InFlightProbe = std::function<std::pair<double, double>()>;

  explicit QueueMetrics(Metrics* metrics);
  ~QueueMetrics();
  QueueMetrics(const QueueMetrics&) = delete;
  QueueMetrics& operator=(const QueueMetrics&) = delete;

  // Starts reporting in-flight work from `probe` at every scrape.
  void WatchInFlight(InFlightProbe probe);

  void Added() { if (adds_) adds_->Increment(); }
  void Retried() { if (retries_) retries_->Increment(); }
  void Depth(size_t ready, size_t waiting, size_t in_flight);
  // From the first change seen to a worker taking the key.
  void Waited(Duration d) { if (latency_) latency_->Observe(Seconds(d)); }
  void Worked(Duration d) { if (work_) work_->Observe(Seconds(d)); }

 private:
  static double Seconds(Duration d) { return static_cast<double>(d.count()) / 1000.0; }

  Metrics* const metrics_;
  Counter* adds_ = nullptr;
  Counter* retries_ = nullptr;
  Gauge* depth_ = nullptr;
  Gauge* waiting_ = nullptr;
  Gauge* in_flight_ = nullptr;
  Histogram* latency_ = nullptr;
  Histogram* work_ = nullptr;
  Metrics::CollectorId collector_ = 0;
};

}  // namespace nodehook
