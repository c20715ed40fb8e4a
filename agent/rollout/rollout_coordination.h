// RolloutCoordination: who coordinates a rollout, and for how long. Every agent with the rollout
// takes part in the election of its coordinator Lease (nodehook-rollout-<rid>-coordinator, held
// like the singleton's: election/leader_election.h); the one that holds it watches every Lease of
// the rollout and runs RolloutCoordinator rounds until its term ends, then stops that watch. The
// others watch only their own Leases. A coordinator that dies is replaced within a lease and the
// retry period; nothing it did is lost, since every grant is a slot Lease.
// Run() on one thread; owns its threads; borrows the client and clocks.
#pragma once

#include <memory>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/election/leader_election.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_client.h"
#include "agent/rollout/rollout_coordinator.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct RolloutCoordinationOptions {
  LeaderElectionOptions election;  // identity and timings
  WatcherOptions watch;            // for the watch of every Lease of the rollout
  RolloutCoordinatorOptions coordinator;
  Duration round{500};             // a coordinator judges at each change its watch brings, at least this often
};

std::string CoordinatorLeaseName(const std::string& rid);

class RolloutCoordination {
 public:
  RolloutCoordination(const WatchedResource& resource, KubeClient& client, Clock& monotonic,
                      const ServerClock& server, EventRecorder& events, RolloutCoordinationOptions options);

  // Takes part in the election until `stop`; coordinates while elected.
  void Run(const CancelToken& stop);

 private:
  // One term: the watch of every Lease and the rounds, until `stop` or the term's end.
  void Coordinate(const CancelToken& stop, const std::function<bool()>& leading);

  const WatchedResource& resource_;
  KubeClient& client_;
  Clock& monotonic_;
  const ServerClock& server_;
  EventRecorder& events_;
  const RolloutCoordinationOptions options_;
  KubeLeaseClient lease_;
  LeaderElector elector_;
};

}  // namespace nodehook
