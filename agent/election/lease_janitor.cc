#include "agent/election/lease_janitor.h"

#include "agent/base/log.h"

namespace nodehook {

LeaseJanitor::LeaseJanitor(LeaseClient& lease, Clock& clock, Duration period)
    : lease_(lease), clock_(clock), period_(period) {}

bool LeaseJanitor::Tick() {
  auto current = lease_.Get();
  if (!current.ok()) {
    if (current.status().code() != StatusCode::kNotFound) {
      Log(LogLevel::kDebug, "lease not read",
          {{"lease", lease_.Describe()}, {"error", current.status().ToString()}, {"next", "look again"}});
    }
    seen_.reset();
    return false;
  }
  TimePoint now = clock_.Now();
  if (!seen_ || !seen_->SameAs(*current) || seen_->resource_version != current->resource_version) {
    seen_ = *current;
    seen_at_ = now;
    return false;
  }
  if (current->holder.empty() || now < seen_at_ + std::chrono::seconds(current->lease_duration_seconds)) return false;
  LeaseRecord freed = *current;
  freed.holder.clear();
  auto updated = lease_.Update(freed);
  if (!updated.ok()) {
    Log(updated.status().code() == StatusCode::kConflict ? LogLevel::kDebug : LogLevel::kWarn, "expired lease not freed",
        {{"lease", lease_.Describe()}, {"holder", current->holder}, {"error", updated.status().ToString()},
         {"next", "look again"}});
    seen_.reset();
    return false;
  }
  Log(LogLevel::kInfo, "expired lease freed",
      {{"lease", lease_.Describe()}, {"holder", current->holder},
       {"unchanged_seconds", std::chrono::duration_cast<std::chrono::seconds>(now - seen_at_).count()},
       {"next", "a candidate takes it"}});
  seen_ = *updated;
  seen_at_ = now;
  return true;
}

void LeaseJanitor::Run(const CancelToken& stop) {
  do {
    Tick();
  } while (SleepUnlessCancelled(clock_, period_, stop));
}

}  // namespace nodehook
