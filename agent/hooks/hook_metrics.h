// HookMetrics: what hook runs did, as Prometheus families (modelled on controller-runtime's
// controller_runtime_reconcile_total / _time_seconds):
//   nodehook_hook_runs_total{resource,handler,outcome}  outcome: done, retry_later, in_progress,
//                                                       failed, timeout, permanent
//   nodehook_hook_duration_seconds{resource,handler}    histogram of each run's wall time
// A run the agent cancelled (it is stopping) is not counted: it runs again after the restart.
// A null registry turns every call into a no-op. Thread-safe (metrics are atomics; the series of
// each resource and handler are looked up in the registry once, then kept under mu_).
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/hooks/hook_outcome.h"

namespace nodehook {

// The outcome label of one run. `permanent`: the reconciler gave up after this failure (the
// retry limits are exhausted), which wins over failed, timeout and retry_later.
const char* HookRunOutcome(const HookOutcome& outcome, bool permanent);

class HookMetrics {
 public:
  explicit HookMetrics(Metrics* metrics) : metrics_(metrics) {}

  // Creates every outcome's series at zero, so a first failure shows as an increase (a series
  // that appears at 1 does not, for rate() and increase()).
  void Declare(const std::string& resource, const std::string& handler);

  // One finished run of `handler` (create, update, delete, resume, event) for `resource`.
  void Ran(const std::string& resource, const std::string& handler, const HookOutcome& outcome, bool permanent);

 private:
  static constexpr std::array<const char*, 6> kOutcomes = {"done",   "retry_later", "in_progress",
                                                           "failed", "timeout",     "permanent"};
  struct Series {
    std::array<Counter*, kOutcomes.size()> runs{};  // by kOutcomes position
    Histogram* durations = nullptr;
  };
  // A lookup in the registry renders the label set and takes its lock: once per series, not per run.
  const Series& SeriesFor(const std::string& resource, const std::string& handler);

  Metrics* const metrics_;
  Mutex mu_;
  using Key = std::pair<std::string, std::string>;  // resource, handler
  struct KeyLess {  // compares views too, so a lookup copies no string
    using is_transparent = void;
    using View = std::pair<std::string_view, std::string_view>;
    static View AsView(const Key& k) { return {k.first, k.second}; }
    static View AsView(const View& v) { return v; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return AsView(a) < AsView(b); }
  };
  std::map<Key, Series, KeyLess> series_ GUARDED_BY(mu_);
};

}  // namespace nodehook
