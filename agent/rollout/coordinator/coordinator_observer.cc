#include "agent/rollout/coordinator/coordinator_observer.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"

namespace nodehook {

CoordinatorObserver::CoordinatorObserver(LeaseClient& lease, Clock& clock, Duration period)
    : lease_(lease), clock_(clock), period_(period) {}

void CoordinatorObserver::Run(const CancelToken& stop) {
  do {
    ReadOnce();
  } while (SleepUnlessCancelled(clock_, period_, stop));
}

void CoordinatorObserver::ReadOnce() {
  Result<LeaseRecord> record = lease_.Get();
  if (record.ok()) {
    fleet_size_.store(record->fleet_size);
    warned_ = false;
  } else if (record.status().code() == StatusCode::kNotFound) {
    fleet_size_.store(0);  // no coordinator yet: nothing to spread by
    warned_ = false;
  } else if (!warned_) {
    // Keep the last size: a stale one spreads the asks about as well.
    Log(LogLevel::kWarn, "rollout coordinator not read",
        {{"lease", lease_.Describe()}, {"error", record.status().ToString()},
         {"next", "keep the fleet size last read; read again in " + SecondsText(period_)}});
    warned_ = true;
  }
}

}  // namespace nodehook
