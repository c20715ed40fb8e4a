// CoordinatorObserver: a node that does not coordinate (tuning.cross_node_writes "steward", where
// the steward does) still spreads its first asks over a time that grows with the fleet
// (node/rollout_gate.h). It learns the fleet's size as every candidate does in "agents" mode: from the
// note the coordinator keeps in its Lease, read at start and then every `period` (the candidates'
// acquire period, four leases: one read per node per period, as before). It never writes.
// Run() on one thread; FleetSize() from any.
#pragma once

#include <atomic>

#include "agent/base/clock.h"
#include "agent/kube/client/lease_client.h"
#include "agent/rollout/coordinator/rollout_participant.h"

namespace nodehook {

class CoordinatorObserver final : public RolloutParticipant {
 public:
  // `lease` (the coordinator's) and `clock` must outlive this.
  CoordinatorObserver(LeaseClient& lease, Clock& clock, Duration period);

  void Run(const CancelToken& stop) override;
  int FleetSize() const override { return fleet_size_.load(); }
  // One read: what Run() does every period.
  void ReadOnce();

 private:
  LeaseClient& lease_;
  Clock& clock_;
  const Duration period_;
  std::atomic<int> fleet_size_{0};
  bool warned_ = false;  // Run()'s thread only: a failing read is logged once until one succeeds
};

}  // namespace nodehook
