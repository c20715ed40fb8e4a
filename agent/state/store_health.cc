#include "agent/state/store_health.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "agent/base/log.h"

namespace nodehook {
namespace {

bool SaysNothingAboutTheFile(StatusCode code) {
  return code == StatusCode::kNotFound || code == StatusCode::kInvalid || code == StatusCode::kCorrupt;
}

long long SecondsBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<std::chrono::seconds>(to - from).count();
}

}  // namespace

StoreHealth::StoreHealth(Clock& clock, StoreHealthOptions options, Metrics& metrics)
    : clock_(clock),
      options_(std::move(options)),
      metrics_(metrics),
      write_failing_gauge_(metrics.GetGauge("state_write_failing", "1 while writes to the state file are failing",
                                            {{"state_file", options_.state_file}})),
      read_failing_gauge_(metrics.GetGauge("state_read_failing", "1 while reads of the state file are failing",
                                           {{"state_file", options_.state_file}})) {}

Counter& StoreHealth::FailuresOf(const char* operation, StoreAccess access) {
  if (access == StoreAccess::kRead) {
    return metrics_.GetCounter("state_read_failures_total", "reads of the state file that failed, by operation",
                               {{"operation", operation}});
  }
  return metrics_.GetCounter("state_write_failures_total", "writes to the state file that failed, by operation",
                             {{"operation", operation}});
}

void StoreHealth::Observe(const char* operation, const Status& result, StoreAccess access) {
  const bool counts = !result.ok() && !SaysNothingAboutTheFile(result.code());
  if (counts) FailuresOf(operation, access).Increment();
  const TimePoint now = clock_.Now();
  // Told under the lock, so a failing and the recovery that follows are never heard reversed.
  MutexLock lock(&mu_);
  const bool was_failing = !failing_.empty();
  if (!counts && !was_failing && !reported_failing_) return;  // the common case: nothing to do
  if (counts) {
    failing_[operation] = Failing{now, access};
    ++failures_;
    ++failures_since_report_;
    last_error_ = result.message();
    if (!was_failing) {
      failing_since_ = now;
      state_since_ = now;
      first_operation_ = operation;
      streak_writes_ = false;
    }
    streak_writes_ = streak_writes_ || access == StoreAccess::kWrite;
  } else if (was_failing && result.ok()) {
    failing_.erase(operation);
    ForgetOldFailures(now);
    if (failing_.empty()) {
      failures_ = 0;
      state_since_ = now;
    }
  }
  SetGauges();
  MaybeReport(now);
}

void StoreHealth::SetGauges() {
  bool reads = std::any_of(failing_.begin(), failing_.end(),
                           [](const auto& f) { return f.second.access == StoreAccess::kRead; });
  write_failing_gauge_.Set(WritesFailing() ? 1 : 0);
  read_failing_gauge_.Set(reads ? 1 : 0);
}

bool StoreHealth::WritesFailing() const {
  return std::any_of(failing_.begin(), failing_.end(),
                     [](const auto& f) { return f.second.access == StoreAccess::kWrite; });
}

void StoreHealth::MaybeReport(TimePoint now) {
  const bool failing = !failing_.empty();
  if (failing == reported_failing_) return;
  const bool held = now - state_since_ >= options_.event_hold;
  const bool quiet = !reported_at_ || now - *reported_at_ >= options_.event_hold;
  if (!held && !(failing && quiet)) return;
  StoreHealthChange change;
  change.failing = failing;
  const std::string& file = options_.state_file;
  if (failing) {
    change.reason = streak_writes_ ? "StateWritesFailing" : "StateReadsFailing";
    change.note = streak_writes_ ? "state file " + file + " does not take writes (" + first_operation_ + "): " +
                                       last_error_ + "; hook outcomes are not kept and the work is retried with backoff"
                                 : "state file " + file + " cannot be read (" + first_operation_ + "): " + last_error_ +
                                       "; the objects are looked at again with backoff";
    reported_writes_ = streak_writes_;
  } else {
    change.reason = reported_writes_ ? "StateWritesRecovered" : "StateReadsRecovered";
    change.note = "state file " + file + " takes reads and writes again after " +
                  std::to_string(failures_since_report_) + " failed in " +
                  std::to_string(SecondsBetween(*reported_at_, now)) + "s (last error: " + last_error_ + ")";
    last_error_.clear();
  }
  // The recovery's note counts every failure since the failing one was told.
  failures_since_report_ = failing ? failures_ : 0;
  reported_failing_ = failing;
  reported_at_ = now;
  const char* event = !failing ? (reported_writes_ ? "state store writes recovered" : "state store reads recovered")
                               : (reported_writes_ ? "state store writes failing" : "state store reads failing");
  Log(failing ? LogLevel::kWarn : LogLevel::kInfo, event,
      {{"state_file", file}, {"detail", change.note},
       {"next", failing ? "not ready until it works; retry with backoff" : "ready again"}});
  if (listener_) listener_(change);
}

void StoreHealth::ForgetOldFailures(TimePoint now) {
  for (auto it = failing_.begin(); it != failing_.end();) {
    it = now - it->second.last >= options_.forget_after ? failing_.erase(it) : std::next(it);
  }
}

std::string StoreHealth::FailingOperations() const {
  std::string names;
  for (const auto& [operation, f] : failing_) names += (names.empty() ? "" : ", ") + operation;
  return names;
}

void StoreHealth::SetListener(Listener listener) {
  MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

std::string StoreHealth::ReadinessProblem() const {
  MutexLock lock(&mu_);
  if (failing_.empty()) return "";
  return "state file " + options_.state_file + ": " + (WritesFailing() ? "writes" : "reads") + " failing for " +
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
