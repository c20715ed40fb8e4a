// RolloutCoordination: who coordinates a rollout, and for how long. Every agent with the rollout
// takes part in the election of its coordinator Lease (nodehook-rollout-<rid>-coordinator, held
// like the singleton's: election/leader_election.h); the one that holds it watches every Lease of
// the rollout and runs RolloutCoordinator rounds until its term ends, then stops that watch. The
// others watch only their own Leases. Candidates try every acquire_period (a read each: every
// agent is one), but the coordinator names kStandbys nodes of its board as standbys in its Lease,
// and they try every retry period: a coordinator that dies is replaced within a lease and a
// retry period (unless its standbys died with it); nothing it did is lost, since every grant is a
// slot Lease.
// Run() on one thread; owns its threads; borrows the client and clocks.
#pragma once

#include <memory>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/base/clock.h"
#include "agent/election/leader_election.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_client.h"
#include "agent/rollout/coordinator/rollout_coordinator.h"
#include "agent/rollout/coordinator/rollout_participant.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct RolloutCoordinationOptions {
  LeaderElectionOptions election;  // identity and timings
  WatcherOptions watch;            // for the watch of every Lease of the rollout
  RolloutCoordinatorOptions coordinator;
  Duration round{500};             // a coordinator judges at each change its watch brings, at least this often
};

std::string CoordinatorLeaseName(const std::string& rid);

// The standbys a coordinator names from its board: up to `count` nodes other than `identity`'s,
// picked by a hash of the rollout id and the node (rendezvous), so the pick moves only when one of
// them leaves. Comma-separated.
std::string PickStandbys(const BoardView& board, const std::string& rid, const std::string& identity, size_t count);

class RolloutCoordination final : public RolloutParticipant {
 public:
  RolloutCoordination(const WatchedResource& resource, KubeClient& client, Clock& monotonic,
                      const ServerClock& server, EventRecorder& events, RolloutCoordinationOptions options);

  // Takes part in the election until `stop`; coordinates while elected.
  void Run(const CancelToken& stop) override;
  // The nodes of the rollout as its coordinator last counted them (its Lease's note, read at each
  // of this agent's election attempts); 0 when not known.
  int FleetSize() const override;

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
  mutable Mutex notes_mu_;
  std::string standbys_ GUARDED_BY(notes_mu_);  // as this agent last picked them as coordinator
  int fleet_size_ GUARDED_BY(notes_mu_) = 0;    // as it last counted them as coordinator
  // Its coordinator's Handover() while it coordinates; otherwise the Lease's is kept as read.
  bool coordinating_ GUARDED_BY(notes_mu_) = false;
  std::string handover_ GUARDED_BY(notes_mu_);
};

inline constexpr size_t kStandbys = 3;

}  // namespace nodehook
