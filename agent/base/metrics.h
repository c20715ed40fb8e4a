// A tiny metrics registry rendered as Prometheus text (exposition format 0.0.4) for /metrics.
// Counters and gauges, each optionally with a label set; every name gets the `nodehook_` prefix.
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
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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

class Metrics {
 public:
  // Returns the counter `name` with `labels`, creating it at zero. `help` is taken from the first
  // registration of the name. Label order does not matter. Using one name as both a counter and a
  // gauge is a programming error: the second kind gets a detached metric that is never rendered
  // (and an error is logged).
  Counter& GetCounter(const std::string& name, const std::string& help, const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help, const MetricLabels& labels = {});

  // Runs before every Render(), outside the registry's lock: refresh gauges that are derived from
  // other state (e.g. seconds since a watch's last event). Callbacks live as long as the registry.
  void AddCollector(std::function<void(Metrics&)> collector);

  // Runs the collectors, then renders HELP and TYPE lines and one sample line per label set;
  // families sorted by name. Not const: collectors record into the registry.
  std::string Render();

 private:
  enum class Kind { kCounter, kGauge };
  struct Family {
    Kind kind;
    std::string help;
    std::map<std::string, std::unique_ptr<Counter>> counters;  // key: rendered label set
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
  };
  Family* FamilyFor(const std::string& name, const std::string& help, Kind kind);  // mu_ held

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;           // guarded by mu_; key: full name
  std::vector<std::unique_ptr<Counter>> detached_counters_;  // guarded by mu_
  std::vector<std::unique_ptr<Gauge>> detached_gauges_;      // guarded by mu_
  std::mutex collectors_mu_;
  std::vector<std::function<void(Metrics&)>> collectors_;  // guarded by collectors_mu_
};

// The process-wide registry the agent's modules record into and /metrics renders.
Metrics& DefaultMetrics();

// Exposed for tests: `name` with the prefix and invalid characters replaced by '_';
// a label set as `{a="x",b="y"}` (sorted, values escaped), "" when empty.
std::string PrometheusName(const std::string& name);
std::string PrometheusLabels(const MetricLabels& labels);

}  // namespace nodehook
