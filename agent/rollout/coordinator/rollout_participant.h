// RolloutParticipant: how this agent takes part in its rollout's coordination, chosen once per
// resource (pipeline/mode_set.cc) by tuning.cross_node_writes:
//   RolloutCoordination  "agents": a candidate for the coordinator Lease, coordinating while
//                        elected (rollout_coordination.h);
//   CoordinatorObserver  "steward": the steward coordinates; the agent only reads the
//                        coordinator's Lease for the fleet's size (coordinator_observer.h).
// Either way the gate spreads its first asks by FleetSize() (node/rollout_gate.h).
#pragma once

#include "agent/base/cancel.h"

namespace nodehook {

class RolloutParticipant {
 public:
  virtual ~RolloutParticipant() = default;
  // Until `stop`; on a thread of its own.
  virtual void Run(const CancelToken& stop) = 0;
  // The nodes of the rollout as its coordinator last counted them (its Lease's note); 0 when not
  // known. Thread-safe.
  virtual int FleetSize() const = 0;
};

}  // namespace nodehook
