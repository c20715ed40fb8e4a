// LeaderElector: client-go's Lease leader election, so that exactly one agent in the cluster
// runs cluster-singleton hooks at a time.
//   - Acquire: a Lease held by another is taken only when it has not changed for its
//     leaseDurationSeconds, measured on the LOCAL monotonic clock from when this agent last saw
//     it change (remote timestamps are never compared with the local clock). Every write is a
//     PUT preconditioned on the resourceVersion read; 409 means another agent won the race.
//     leaseTransitions grows on every takeover; holderIdentity is `identity`.
//   - Renew every retry_period while leading; acquire attempts every retry_period with
//     client-go's jitter (up to 2.2x), so agents do not retry in step. An election every agent
//     of a large fleet takes part in sets a longer acquire_period; the leader then names a few
//     standbys in the Lease (SetNotes), which keep trying every retry period, so the Lease is
//     still taken over within its duration and a retry period when the leader dies.
//   - The term ends when no renew succeeded within renew_deadline of the last successful one
//     (measured from when that renew was SENT, which is before any other agent can have seen it):
//     no singleton hook starts after that instant, and the term token is cancelled then by a
//     fence thread that does not wait for a hanging API call. Running hooks get SIGTERM and
//     SIGKILL after the runner's grace, which config validation keeps below lease_duration -
//     renew_deadline, so they are gone before any other agent can take over.
//   - After the term ends the agent keeps trying, and leads again once the Lease is free or
//     still its own: it rejoins by itself. On Run()'s end it releases a Lease it still holds.
// `clock` must be monotonic (MonotonicClock; FakeClock in tests). Thread-safe: Run() on one
// thread, TermIfMayStart()/IsLeader() from any.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/election/leadership.h"
#include "agent/kube/client/lease_client.h"

namespace nodehook {

struct LeaderElectionOptions {
  std::string identity;               // node name, plus "_" + pod uid when known
  Duration lease_duration{15'000};
  Duration renew_deadline{10'000};
  Duration retry_period{2'000};
  // How often a candidate that does not lead tries to acquire (jittered as above); zero:
  // retry_period. Longer for an election every agent of a large fleet takes part in, where each
  // attempt is a read of the Lease by every candidate.
  Duration acquire_period{0};
  uint64_t seed = 0;                  // acquire jitter; 0 = random
  // False: a Lease another holds is never taken over, however long it has not changed; it is taken
  // once free. The steward frees an expired one (tuning.cross_node_writes "steward"), so the
  // node-bound admission rules can refuse every takeover by an agent (docs/security.md).
  bool takes_over = true;
  // What the holder does, for the log lines of a term's start and end.
  std::string leads{"run singleton hooks"};
  std::string stops{"stop singleton hooks (SIGTERM, then SIGKILL)"};
};

// `options` with the holder's work named for the log lines.
inline LeaderElectionOptions Roles(LeaderElectionOptions options, std::string leads, std::string stops) {
  options.leads = std::move(leads);
  options.stops = std::move(stops);
  return options;
}

class LeaderElector final : public Leadership {
 public:
  // `lease` and `clock` must outlive this.
  LeaderElector(LeaseClient& lease, Clock& clock, LeaderElectionOptions options);

  // One round of client-go's tryAcquireOrRenew. True when this agent holds the Lease after it
  // (and then a term is running).
  bool TryAcquireOrRenew();
  // Ends the term when the renew deadline has passed (what the fence thread does); returns when
  // it must be checked next.
  TimePoint EnforceRenewDeadline();
  // Elects and renews until `stop`; then ends the term and releases the Lease if still held.
  // Call it only after the singleton hooks have stopped, or a release could let another agent
  // start while one still runs here.
  void Run(const CancelToken& stop);
  // Gives the Lease up at once (holder "", duration 1 s) if the record read last is still ours.
  void Release();

  std::shared_ptr<const CancelToken> TermIfMayStart() const override;
  bool IsLeader() const;
  // Called on each write while leading (outside the lock), to fill in the record's notes for the
  // other candidates (standbys, fleet size: lease_record.h). Set before Run.
  void SetNotes(std::function<void(LeaseRecord&)> notes);
  // The Lease as this agent last read or wrote it (nullopt before the first read).
  std::optional<LeaseRecord> Observed() const;
  // How long this candidate waits before its next attempt: retry_period when the Lease as last
  // read names it a standby or names none (or no acquire_period is set), else acquire_period;
  // both jittered.
  Duration AcquireWait();
  // Called (outside the lock) when a term starts (true) or ends (false).
  void SetOnChange(std::function<void(bool leading)> on_change);
  // Called with the instant by which singleton hooks must stop, on every successful renew, and
  // with TimePoint{} when the term ends. Called under the elector's lock, so calls never
  // overtake each other: it must not call back into the elector.
  void SetOnStopBy(std::function<void(TimePoint stop_by)> on_stop_by);

 private:
  void StartTerm(TimePoint renew_sent, const LeaseRecord& stored, bool takeover);
  void EndTerm(const char* why);
  void Observe(const LeaseRecord& record);
  // True when the Lease was found deleted while another agent may still be in its term.
  bool WaitsOutDeletedLease();
  // Until Run ends (fence_done_), ends the term once the renew deadline passes without a renew.
  void FenceLoop() EXCLUDES(mu_);
  void Note(LeaseRecord& record) const;

  LeaseClient& lease_;
  Clock& clock_;
  const LeaderElectionOptions options_;
  std::function<void(bool)> on_change_ GUARDED_BY(mu_);
  std::function<void(TimePoint)> on_stop_by_ GUARDED_BY(mu_);
  std::function<void(LeaseRecord&)> notes_;  // set before Run

  mutable Mutex mu_;
  std::condition_variable cv_;  // wakes the fence thread when the term or deadline changes
  std::optional<LeaseRecord> observed_ GUARDED_BY(mu_);  // the record as last read or written
  TimePoint observed_at_ GUARDED_BY(mu_){};  // local time the record last changed
  bool leading_ GUARDED_BY(mu_) = false;
  TimePoint renewed_at_ GUARDED_BY(mu_){};  // when the last successful write was sent
  std::shared_ptr<CancelToken> term_ GUARDED_BY(mu_);  // cancelled when the term ends
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  bool fence_done_ GUARDED_BY(mu_) = false;  // Run is ending: the fence thread stops
};

}  // namespace nodehook
