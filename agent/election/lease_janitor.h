// LeaseJanitor: frees a Lease whose holder stopped renewing it, for candidates that never take a
// held Lease over (LeaderElectionOptions::takes_over false: the agents under the node-bound
// admission rules, which refuse any takeover by an agent). It judges expiry exactly as a
// candidate does (leader_election.h): the record has not changed for its leaseDurationSeconds,
// measured on the LOCAL monotonic clock from when this janitor last saw it change. Then one PUT,
// preconditioned on the resourceVersion read, clears holderIdentity (and nothing else): any agent
// may then take it. The steward runs one per singleton Lease.
// `clock` must be monotonic. Run() on one thread.
#pragma once

#include <optional>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/kube/client/lease_client.h"

namespace nodehook {

class LeaseJanitor {
 public:
  // `lease` and `clock` are borrowed and must outlive this; it looks every `period`.
  LeaseJanitor(LeaseClient& lease, Clock& clock, Duration period);

  // One look: true when it freed the Lease.
  bool Tick();
  void Run(const CancelToken& stop);

 private:
  LeaseClient& lease_;
  Clock& clock_;
  const Duration period_;
  std::optional<LeaseRecord> seen_;  // as last read
  TimePoint seen_at_{};              // when it last changed
};

}  // namespace nodehook
