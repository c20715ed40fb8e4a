#include "agent/hooks/hook_metrics.h"

namespace nodehook {

const char* HookRunOutcome(const HookOutcome& outcome, bool permanent) {
  if (permanent) return "permanent";
  if (outcome.timed_out) return "timeout";
  return HookVerdictName(outcome.verdict);
}

const HookMetrics::Series& HookMetrics::SeriesFor(const std::string& resource, const std::string& handler) {
  MutexLock lock(&mu_);
  auto it = series_.find(std::make_pair(std::string_view(resource), std::string_view(handler)));
  if (it != series_.end()) return it->second;
  Series series;
  for (size_t i = 0; i < kOutcomes.size(); ++i) {
    series.runs[i] = &metrics_->GetCounter(
        "hook_runs_total",
        "Hook runs by how they ended: done, retry_later, in_progress, failed, timeout, "
        "permanent (a failure after which the handler gives up)",
        {{"resource", resource}, {"handler", handler}, {"outcome", kOutcomes[i]}});
  }
  series.durations = &metrics_->GetHistogram("hook_duration_seconds",
                                             "Wall time of each hook run, from start to exit (or kill)",
                                             {{"resource", resource}, {"handler", handler}});
  // std::map never moves its values: the reference stays good after later insertions.
  return series_.emplace(std::make_pair(resource, handler), series).first->second;
}

void HookMetrics::Declare(const std::string& resource, const std::string& handler) {
  if (metrics_) SeriesFor(resource, handler);
}

void HookMetrics::Ran(const std::string& resource, const std::string& handler, const HookOutcome& outcome,
                      bool permanent) {
  if (!metrics_ || outcome.verdict == HookVerdict::kCancelled) return;
  const Series& series = SeriesFor(resource, handler);
  const std::string_view name = HookRunOutcome(outcome, permanent);
  for (size_t i = 0; i < kOutcomes.size(); ++i) {
    if (name == kOutcomes[i]) series.runs[i]->Increment();
  }
  series.durations->Observe(static_cast<double>(outcome.duration.count()) / 1000.0);
}

}  // namespace nodehook
