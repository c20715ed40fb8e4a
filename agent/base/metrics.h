// A tiny metrics registry rendered as Prometheus text (exposition format 0.0.4) for /metrics.
// Counters, gauges and histograms, each optionally with a label set; every name gets the
// `nodehook_` prefix, except the standard `process_*` names that every Prometheus client exports.
//
// Ownership: the registry owns every metric it hands out; references stay valid for the
// registry's lifetime, so hot paths look a metric up once and keep the reference.
// Thread-safety: everything is thread-safe. Increments and sets are lock-free atomics;
// lookups and Render() take the registry's mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/mutex.h"

namespace nodehook {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Increment(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double delta);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Cumulative buckets as Prometheus expects: bucket i counts observations <= bounds[i]; +Inf is
// the count. Observe() is lock-free.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Observations <= bounds()[i] (non-cumulative per slot; rendering accumulates).
  uint64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.value(); }

 private:
  const std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  Gauge sum_;
};

// Bucket bounds in seconds for latencies from 1 ms to about 1 min (client-go's workqueue uses
// 10^-8..10^1; ours start where a hook start can be measured).
std::vector<double> LatencyBuckets();

class Metrics {
 public:
  // Returns the counter `name` with `labels`, creating it at zero. `help` is taken from the first
  // registration of the name. Label order does not matter. Using one name as both a counter and a
  // gauge is a programming error: the second kind gets a detached metric that is never rendered
  // (and an error is logged).
  Counter& GetCounter(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  // A counter whose value a collector copies from elsewhere (e.g. /proc): rendered as a counter,
  // set like a gauge.
  Gauge& GetDerivedCounter(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  // `bounds` are taken from the first registration of the name.
  Histogram& GetHistogram(const std::string& name, const std::string& help, const MetricLabels& labels = {},
                          const std::vector<double>& bounds = LatencyBuckets());

  // Runs before every Render(), outside the registry's lock: refresh gauges that are derived from
  // other state (e.g. seconds since a watch's last event). A collector stays until removed; one
  // that reads an object must be removed before that object dies.
  using CollectorId = uint64_t;
  CollectorId AddCollector(std::function<void(Metrics&)> collector);
  void RemoveCollector(CollectorId id);

  // Runs the collectors, then renders HELP and TYPE lines and one sample line per label set;
  // families sorted by name. Not const: collectors record into the registry.
  std::string Render();

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Family {
    Kind kind;
    std::string help;
    std::vector<double> bounds;  // histograms only
    std::map<std::string, std::unique_ptr<Counter>> counters;  // key: rendered label set
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  static void RenderHistogram(const std::string& name, const std::string& labels, const Histogram& h,
                              std::string* out);
  Family* FamilyFor(const std::string& name, const std::string& help, Kind kind) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Family> families_ GUARDED_BY(mu_);  // key: full name
  std::vector<std::unique_ptr<Counter>> detached_counters_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Gauge>> detached_gauges_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Histogram>> detached_histograms_ GUARDED_BY(mu_);
  Mutex collectors_mu_;
  std::map<CollectorId, std::function<void(Metrics&)>> collectors_ GUARDED_BY(collectors_mu_);
  CollectorId next_collector_ GUARDED_BY(collectors_mu_) = 1;
};

// The process-wide registry the agent's modules record into and /metrics renders.
Metrics& DefaultMetrics();

// Exposed for tests: `name` with the prefix and invalid characters replaced by '_';
// a label set as `{a="x",b="y"}` (sorted, values escaped), "" when empty.
std::string PrometheusName(const std::string& name);
std::string PrometheusLabels(const MetricLabels& labels);

// Registers the standard process_* gauges (RSS, virtual memory, CPU seconds, open and max fds,
// start time; read from /proc/self at every scrape) and nodehook_build_info{version}.
void RegisterProcessMetrics(Metrics& metrics, const std::string& version);

}  // namespace nodehook
