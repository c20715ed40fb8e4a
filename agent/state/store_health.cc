#include "agent/state/store_health.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "agent/base/log.h"

namespace nodehook {
namespace {

bool SaysNothingAboutTheFile(StatusCode code) {
  return code == StatusCode::kNotFound || code == StatusCode::kInvalid;
}

long long SecondsBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<std::chrono::seconds>(to - from).count();
}

}  // namespace

StoreHealth::StoreHealth(Clock& clock, StoreHealthOptions options, Metrics& metrics)
    : clock_(clock),
      options_(std::move(options)),
      metrics_(metrics),
      failing_gauge_(metrics.GetGauge("state_write_failing", "1 while writes to the state file are failing",
                                      {{"state_file", options_.state_file}})) {}

Counter& StoreHealth::FailuresOf(const char* operation) {
  return metrics_.GetCounter("state_write_failures_total", "writes to the state file that failed, by operation",
                             {{"operation", operation}});
}

void StoreHealth::Observe(const char* operation, const Status& result) {
  if (!result.ok() && SaysNothingAboutTheFile(result.code())) return;
  if (!result.ok()) FailuresOf(operation).Increment();
  const TimePoint now = clock_.Now();
  StoreHealthChange change;
  // Told under the lock, so a failing and the recovery that follows are never heard reversed.
  MutexLock lock(&mu_);
  bool was_failing = !failing_.empty();
  if (result.ok()) {
    if (!was_failing) return;
    failing_.erase(operation);
    ForgetOldFailures(now);
    if (!failing_.empty()) return;
    change.note = "state file " + options_.state_file + " takes writes again after " + std::to_string(failures_) +
                  " failed in " + std::to_string(SecondsBetween(failing_since_, now)) + "s (last error: " + last_error_ +
                  ")";
    failures_ = 0;
    last_error_.clear();
  } else {
    failing_[operation] = now;
    ++failures_;
    last_error_ = result.message();
    if (was_failing) return;  // told once, when the streak began
    failing_since_ = now;
    change.failing = true;
    change.note = "state file " + options_.state_file + " does not take writes (" + operation + "): " + last_error_ +
                  "; hook outcomes are not kept and the work is retried with backoff";
  }
  failing_gauge_.Set(change.failing ? 1 : 0);
  Log(change.failing ? LogLevel::kWarn : LogLevel::kInfo,
      change.failing ? "state store writes failing" : "state store writes recovered",
      {{"state_file", options_.state_file}, {"detail", change.note},
       {"next", change.failing ? "not ready until writes succeed; retry with backoff" : "ready again"}});
  if (listener_) listener_(change);
}

void StoreHealth::ForgetOldFailures(TimePoint now) {
  for (auto it = failing_.begin(); it != failing_.end();) {
    it = now - it->second >= options_.forget_after ? failing_.erase(it) : std::next(it);
  }
}

std::string StoreHealth::FailingOperations() const {
  std::string names;
  for (const auto& [operation, last] : failing_) names += (names.empty() ? "" : ", ") + operation;
  return names;
}

void StoreHealth::SetListener(Listener listener) {
  MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

std::string StoreHealth::ReadinessProblem() const {
  MutexLock lock(&mu_);
  if (failing_.empty()) return "";
  return "state file " + options_.state_file + ": writes failing for " +
         std::to_string(SecondsBetween(failing_since_, clock_.Now())) + "s (" + std::to_string(failures_) +
         " failed; failing: " + FailingOperations() + "): " + last_error_;
}

Duration StoreHealth::RetryDelay() const {
  MutexLock lock(&mu_);
  if (failing_.empty()) return options_.retry_base;
  Duration age = std::chrono::duration_cast<Duration>(clock_.Now() - failing_since_);
  return std::clamp(age, options_.retry_base, std::max(options_.retry_base, options_.retry_max));
}

bool StoreHealth::failing() const {
  MutexLock lock(&mu_);
  return !failing_.empty();
}

int64_t StoreHealth::failures_in_streak() const {
  MutexLock lock(&mu_);
  return failures_;
}

}  // namespace nodehook
