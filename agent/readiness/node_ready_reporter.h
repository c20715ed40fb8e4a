// NodeReadyReporter: this node's record for one resource with a ready_condition
// (ready_records.h): for each object it acts on, the state it last handled here, or the state
// its handler is failing for, with the message. The fleet's writer (ready_coordination.h) reads
// every node's record and sums them up in the object's condition.
// Each round takes what the agent knows now (a ReadyReport: its memory and its store), keeps
// the record's older results for objects it has not settled yet (a restarted agent keeps
// what its record said until it looks at each object again, so a restart writes nothing), drops
// objects it no longer knows, and writes the Lease only when a result's state or outcome
// changed, or the node's labels or Node did: every change of many objects within a round is one
// write. A failing handler's later messages ride along with the next write; they start none.
// Its first round reads the record; only this node writes it, so later rounds read it again only
// every `recheck` (one GET): a record deleted or edited by someone else (kubectl) is written again
// then, not only at the node's next change.
// Run() on one thread (it owns its rounds); borrows the client and clock.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/node/node_lease_writer.h"  // NodePresence
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {

// What this node knows of the resource's objects now.
struct ReadyReport {
  bool synced = false;          // its watch completed the first list
  std::set<std::string> known;  // the objects it acts on (targeting), by uid
  // Of those, each object whose current state is settled here (done) or whose handler is
  // failing (failed, with the message), by uid. at_ms is set by the reporter.
  std::map<std::string, NodeResult> results;
};

struct NodeReadyReporterOptions {
  std::string node;
  std::string namespace_name;  // where the Leases live (tuning.lease_namespace)
  std::function<ReadyReport()> report;
  // This node's Node: its uid owns the record, its labels go on it; once gone, nothing is written.
  std::function<NodePresence()> presence;
  Duration round{2000};
  Duration recheck{std::chrono::minutes(5)};
};

class NodeReadyReporter {
 public:
  NodeReadyReporter(const WatchedResource& resource, KubeClient& client, Clock& clock, const ServerClock& server,
                    NodeReadyReporterOptions options);

  void Run(const CancelToken& stop);
  // One round (Run calls it; tests call it directly).
  Status Round();

  // The writes made so far (a metric and the tests' count).
  int writes() const { return writes_; }

 private:
  // The record as it should be now; nullopt when nothing changed since it was written.
  std::optional<RolloutLease> Wanted(const ReadyReport& report, const NodePresence& presence) const;
  Status Write(RolloutLease& record);
  // No record under its name: takes the one an earlier version wrote under the hashed name.
  Status LoadHashed();
  void NoteOutcome(const Status& written);

  const WatchedResource& resource_;
  const std::string rid_;
  const std::string name_;
  KubeClient& client_;
  Clock& clock_;
  const ServerClock& server_;
  const NodeReadyReporterOptions options_;
  bool loaded_ = false;     // the record was read (and is not due to be read again)
  bool read_once_ = false;  // it was read at least once (so a record not found is one deleted)
  TimePoint recheck_at_{};  // when it is read again
  std::string hashed_left_;  // the record under its hashed name (an earlier version's), deleted once moved
  RolloutLease written_;    // as this node last wrote or read it (kind "" when there is none)
  bool failing_ = false;    // the last write failed (logged once per streak)
  bool synced_once_ = false;  // a round after the first list ran (a record found as it was is logged)
  int writes_ = 0;
};

}  // namespace nodehook
