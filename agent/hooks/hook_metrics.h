// HookMetrics: what hook runs did, as Prometheus families (modelled on controller-runtime's
// controller_runtime_reconcile_total / _time_seconds):
//   nodehook_hook_runs_total{resource,handler,outcome}  outcome: done, retry_later, in_progress,
//                                                       failed, timeout, permanent
//   nodehook_hook_duration_seconds{resource,handler}    histogram of each run's wall time
// A run the agent cancelled (it is stopping) is not counted: it runs again after the restart.
// A null registry turns every call into a no-op. Thread-safe (metrics are atomics).
#pragma once

#include <string>

#include "agent/base/metrics.h"
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
  Counter& Runs(const std::string& resource, const std::string& handler, const char* outcome);
  Histogram& Durations(const std::string& resource, const std::string& handler);

  Metrics* const metrics_;
};

}  // namespace nodehook
