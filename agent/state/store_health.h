// StoreHealth: whether this node's state file still takes writes, judged from every write's
// Status (ObservedStateStore reports them), and what follows from that. The store is failing
// while some operation's last write failed: on a full disk small writes (a "running" mark, a
// housekeeping pass that changes nothing) may still succeed while every hook's outcome fails,
// so one operation's success does not clear another's failure. An operation that has not failed
// again for `forget_after` while other writes succeed is let go: whatever failed has been
// retried by then (the retry delay is capped at `retry_max`), or its caller stopped trying.
//   metrics   nodehook_state_write_failures_total{operation}  failed writes by StateStore method
//             nodehook_state_write_failing{state_file}        1 while failing (above)
//   readiness ReadinessProblem(): "" while writes work, else a line naming the file and the error
//   Events    the listener hears each change once: failing (the first failure while healthy)
//             and recovered (no operation failing any more), never once per write
//   cadence   RetryDelay(): how soon work that failed on a store write should try again
//
// Why RetryDelay follows the failing streak's age, not a failure count: every object's retry
// writes, so with 40 objects a shared count passes 40 in the first round and would jump to the
// cap at once; a count per object would need memory per object here. Waiting as long as the
// outage has lasted so far (from `retry_base`, capped at `retry_max`) doubles the delay on every
// round, like the hooks' own backoff, and a store that recovers is written again within about as
// long as it was down (at most `retry_max`).
//
// A write counts as failed when its Status is not ok and not one of the answers that say nothing
// about the file (kNotFound: nothing to retry; kInvalid: refused input).
//
// Thread-safe. Does not own the clock or metrics, which must outlive it. The listener is called
// on the writing thread with the lock held (so changes are heard in order): it must be quick and
// must not call back into this object.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"

namespace nodehook {

struct StoreHealthOptions {
  std::string state_file;
  Duration retry_base{5000};   // the first retry after a failed write
  Duration retry_max{300'000};  // the cap (tuning.retry_max_seconds)
  Duration forget_after{600'000};  // twice the longest retry delay, see above
};

// One change of the store's health, for an Event and a log line.
struct StoreHealthChange {
  bool failing = false;  // true: writes started failing; false: they work again
  std::string note;      // one line naming the file, the operation and the error (or the count)
};

class StoreHealth {
 public:
  using Listener = std::function<void(const StoreHealthChange&)>;

  StoreHealth(Clock& clock, StoreHealthOptions options, Metrics& metrics = DefaultMetrics());
  StoreHealth(const StoreHealth&) = delete;
  StoreHealth& operator=(const StoreHealth&) = delete;

  // The result of one write through `operation` (a StateStore/ScheduleStore method name).
  void Observe(const char* operation, const Status& result) EXCLUDES(mu_);

  // Hears every change from now on; nullptr stops that (call before the listener goes away).
  void SetListener(Listener listener) EXCLUDES(mu_);

  // "" while writes work; else e.g. "state file /var/lib/nodehook/state.db: writes failing for
  // 42s (17 failed; failing: RecordAttempt, RecordHandled): sqlite RecordHandled: no space left on ...".
  std::string ReadinessProblem() const EXCLUDES(mu_);
  // How soon to try again after a failed write (see the header comment); retry_base when healthy.
  Duration RetryDelay() const EXCLUDES(mu_);
  bool failing() const EXCLUDES(mu_);
  // Failed writes since the store started failing; 0 while healthy.
  int64_t failures_in_streak() const EXCLUDES(mu_);

 private:
  Counter& FailuresOf(const char* operation);
  // Drops the operations that have not failed for forget_after.
  void ForgetOldFailures(TimePoint now) REQUIRES(mu_);
  std::string FailingOperations() const REQUIRES(mu_);

  Clock& clock_;
  const StoreHealthOptions options_;
  Metrics& metrics_;
  Gauge& failing_gauge_;

  mutable Mutex mu_;
  std::map<std::string, TimePoint> failing_ GUARDED_BY(mu_);  // operation -> its last failure
  int64_t failures_ GUARDED_BY(mu_) = 0;                        // in this streak
  TimePoint failing_since_ GUARDED_BY(mu_);
  std::string last_error_ GUARDED_BY(mu_);
  Listener listener_ GUARDED_BY(mu_);
};

}  // namespace nodehook
