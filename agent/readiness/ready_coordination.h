// ReadyCoordination: who writes a resource's ready_condition, and for how long. Its candidates
// (every agent with tuning.cross_node_writes "agents", the steward's replicas with "steward")
// take part in the election of nodehook-ready-<rid>-writer, held like the singleton's
// (election/leader_election.h). Candidates try every acquire_period, but the writer names
// kStandbys nodes of its records' board as standbys in its Lease, and they try every retry
// period, as the rollout coordinator's do (rollout/coordinator/rollout_coordination.h). The one that holds it watches the nodes' records
// (ready_records.h) and the resource's objects, and runs ReadyWriter rounds at each change (at
// most one per `round`: changes within it are one write per object) until its term ends. A
// writer that dies is replaced within a lease and a retry period; the new one lists the
// objects and the records and writes only where a condition is not what it should be, so a
// handover over unchanged objects writes nothing.
// Run() on one thread; owns its threads; borrows the client and clocks.
#pragma once

#include <functional>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/config/config.h"
#include "agent/election/leader_election.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/client/lease_client.h"
#include "agent/watch/watcher.h"

namespace nodehook {

struct ReadyCoordinationOptions {
  LeaderElectionOptions election;  // identity and timings
  WatcherOptions watch;            // for the watches of the records and the objects
  std::string namespace_name;      // where the Leases live
  Duration round{1000};            // the writer judges at most this often, and at least this often
};

std::string ReadyWriterLeaseName(const std::string& rid);

class ReadyCoordination {
 public:
  ReadyCoordination(const WatchedResource& resource, KubeClient& client, Clock& monotonic,
                    ReadyCoordinationOptions options);

  // Takes part in the election until `stop`; writes while elected.
  void Run(const CancelToken& stop);

 private:
  // One term: the watches and the rounds, until `stop` or the term's end.
  void Write(const CancelToken& stop, const std::function<bool()>& leading);

  const WatchedResource& resource_;
  KubeClient& client_;
  Clock& monotonic_;
  const ReadyCoordinationOptions options_;
  KubeLeaseClient lease_;
  LeaderElector elector_;
  mutable Mutex notes_mu_;
  std::string standbys_ GUARDED_BY(notes_mu_);  // as this agent last picked them as writer
};

}  // namespace nodehook
