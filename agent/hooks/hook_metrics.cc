#include "agent/hooks/hook_metrics.h"

namespace nodehook {

const char* HookRunOutcome(const HookOutcome& outcome, bool permanent) {
  if (permanent) return "permanent";
  if (outcome.timed_out) return "timeout";
  return HookVerdictName(outcome.verdict);
}

Counter& HookMetrics::Runs(const std::string& resource, const std::string& handler, const char* outcome) {
  return metrics_->GetCounter("hook_runs_total",
                              "Hook runs by how they ended: done, retry_later, in_progress, failed, timeout, "
                              "permanent (a failure after which the handler gives up)",
                              {{"resource", resource}, {"handler", handler}, {"outcome", outcome}});
}

Histogram& HookMetrics::Durations(const std::string& resource, const std::string& handler) {
  return metrics_->GetHistogram("hook_duration_seconds", "Wall time of each hook run, from start to exit (or kill)",
                                {{"resource", resource}, {"handler", handler}});
}

void HookMetrics::Declare(const std::string& resource, const std::string& handler) {
  if (!metrics_) return;
  for (const char* outcome : {"done", "retry_later", "in_progress", "failed", "timeout", "permanent"}) {
    Runs(resource, handler, outcome);
  }
  Durations(resource, handler);
}

void HookMetrics::Ran(const std::string& resource, const std::string& handler, const HookOutcome& outcome,
                      bool permanent) {
  if (!metrics_ || outcome.verdict == HookVerdict::kCancelled) return;
  Runs(resource, handler, HookRunOutcome(outcome, permanent)).Increment();
  Durations(resource, handler).Observe(static_cast<double>(outcome.duration.count()) / 1000.0);
}

}  // namespace nodehook
