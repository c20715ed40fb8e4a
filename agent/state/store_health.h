// StoreHealth: whether this node's state file still takes reads and writes, judged from every
// Status ObservedStateStore reports, and what follows from that. The store is failing while some
// operation's last attempt failed: on a full disk small writes (a "running" mark, a housekeeping
// pass that changes nothing) may still succeed while every hook's outcome fails, so one
// operation's success does not clear another's failure. An operation that has not failed again
// for `forget_after` while others succeed is let go: whatever failed has been retried by then
// (the retry delay is capped at `retry_max`), or its caller stopped trying.
//   metrics   nodehook_state_write_failures_total{operation}  failed writes by StateStore method
//             nodehook_state_read_failures_total{operation}   failed reads by method
//             nodehook_state_write_failing{state_file}        1 while some write operation is failing
//             nodehook_state_read_failing{state_file}         1 while some read operation is failing
//   readiness ReadinessProblem(): "" while reads and writes work, else a line naming the file and the error
//   Events    the listener hears each change once (failing; recovered), never once per attempt,
//             and only once the change has held for `event_hold`: a failing streak that begins
//             when nothing was reported for that long is told at once; any other change (a
//             recovery, or a new failure soon after a recovery) must last `event_hold` first, so
//             an operation that fails every other time posts one failing Event, not one per flip.
//             Readiness and the gauges follow at once. Reported changes are checked at every
//             observed attempt (the agent reads the store's counts every second).
//   cadence   RetryDelay(): how soon work that failed on a store read or write should try again
//
// Why RetryDelay follows the failing streak's age, not a failure count: every object's retry
// writes, so with 40 objects a shared count passes 40 in the first round and would jump to the
// cap at once; a count per object would need memory per object here. Waiting as long as the
// outage has lasted so far (from `retry_base`, capped at `retry_max`) doubles the delay on every
// round, like the hooks' own backoff, and a store that recovers is written again within about as
// long as it was down (at most `retry_max`).
//
// An attempt counts as failed when its Status is not ok and not one of the answers that say
// nothing about the file (kNotFound: nothing to retry; kInvalid: refused input; kCorrupt: one
// record, quarantined by its caller).
//
// Thread-safe. Does not own the clock or metrics, which must outlive it. The listener is called
// on the observing thread with the lock held (so changes are heard in order): it must be quick
// and must not call back into this object.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
  Duration event_hold{60'000};     // tuning.state_event_hold_seconds
};

enum class StoreAccess { kWrite, kRead };

// One change of the store's health, for an Event and a log line.
struct StoreHealthChange {
  bool failing = false;  // true: the file started failing; false: it works again
  std::string reason;    // the Event's: StateWritesFailing, StateReadsFailing, StateWritesRecovered, ...
  std::string note;      // one line naming the file, the operation and the error (or the count)
};

class StoreHealth {
 public:
  using Listener = std::function<void(const StoreHealthChange&)>;

  StoreHealth(Clock& clock, StoreHealthOptions options, Metrics& metrics = DefaultMetrics());
  StoreHealth(const StoreHealth&) = delete;
  StoreHealth& operator=(const StoreHealth&) = delete;

  // The result of one attempt through `operation` (a StateStore/ScheduleStore method name).
  void Observe(const char* operation, const Status& result, StoreAccess access = StoreAccess::kWrite)
      EXCLUDES(mu_);

  // Hears every change from now on; nullptr stops that (call before the listener goes away).
  void SetListener(Listener listener) EXCLUDES(mu_);

  // "" while reads and writes work; else e.g. "state file /var/lib/nodehook/state.db: writes
  // failing for 42s (17 failed; failing: RecordAttempt, RecordHandled): sqlite RecordHandled: no
  // space left on ..." ("reads failing" when only reads fail).
  std::string ReadinessProblem() const EXCLUDES(mu_);
  // How soon to try again after a failed write (see the header comment); retry_base when healthy.
  Duration RetryDelay() const EXCLUDES(mu_);
  bool failing() const EXCLUDES(mu_);
  // Failed attempts since the store started failing; 0 while healthy.
  int64_t failures_in_streak() const EXCLUDES(mu_);

 private:
  Counter& FailuresOf(const char* operation, StoreAccess access);
  // Drops the operations that have not failed for forget_after.
  void ForgetOldFailures(TimePoint now) REQUIRES(mu_);
  std::string FailingOperations() const REQUIRES(mu_);
  bool WritesFailing() const REQUIRES(mu_);
  void SetGauges() REQUIRES(mu_);
  // Tells the listener (and the log) of a change that has held long enough (see above).
  void MaybeReport(TimePoint now) REQUIRES(mu_);

  Clock& clock_;
  const StoreHealthOptions options_;
  Metrics& metrics_;
  Gauge& write_failing_gauge_;
  Gauge& read_failing_gauge_;

  mutable Mutex mu_;
  struct Failing {
    TimePoint last;  // its last failure
    StoreAccess access;
  };
  std::map<std::string, Failing> failing_ GUARDED_BY(mu_);  // by operation
  int64_t failures_ GUARDED_BY(mu_) = 0;                      // in this streak
  TimePoint failing_since_ GUARDED_BY(mu_);
  std::string last_error_ GUARDED_BY(mu_);
  std::string first_operation_ GUARDED_BY(mu_);  // the streak's first failure
  bool streak_writes_ GUARDED_BY(mu_) = false;   // some write failed in this streak
  // What the listener last heard, when, and since when the state has been what it is now.
  bool reported_failing_ GUARDED_BY(mu_) = false;
  bool reported_writes_ GUARDED_BY(mu_) = false;
  std::optional<TimePoint> reported_at_ GUARDED_BY(mu_);
  TimePoint state_since_ GUARDED_BY(mu_);
  int64_t failures_since_report_ GUARDED_BY(mu_) = 0;  // for the recovery's note
  Listener listener_ GUARDED_BY(mu_);
};

}  // namespace nodehook
