// NodeLeaseWriter: this node's Lease in a rollout (rules/rollout_leases.h): the object states it
// asks the coordinator for (requests), its results, the shared policy, and its Node as owner with
// the Node's labels, which the others judge targeting and holds by. Only this node writes it, so a
// stale version or a deletion by someone else is read again and written over. A write that fails
// stays due and is tried again at Renew, backing off; a node whose Node is gone writes it no more
// (the garbage collector deletes it with the Node).
// Not thread-safe: RolloutGate owns it and calls it under its lock. Borrows the client, board and
// clocks, which must outlive it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/board/rollout_board.h"

namespace nodehook {

// This node's Node object: its uid and labels while it is there; `gone` once it was there and is
// deleted.
struct NodePresence {
  std::string uid;
  bool gone = false;
  std::optional<LabelMap> labels{};
};

struct NodeLeaseWriterOptions {
  std::string node;
  std::string namespace_name;  // where the Leases live (tuning.lease_namespace)
  // Where known, the Lease is owned by the Node, so the garbage collector deletes it with the
  // Node: a node that left stops counting for canaries, completion and percentages. Empty: no
  // owner (tests).
  std::function<NodePresence()> presence;
  Duration retry{2000};  // the first wait before a failed write is tried again; doubles, ≤ 5 min
};

class NodeLeaseWriter {
 public:
  NodeLeaseWriter(const WatchedResource& resource, KubeClient& client, const BoardReader& board, Clock& monotonic,
                  const ServerClock& server, NodeLeaseWriterOptions options);

  // Creates (or updates) the Lease once the board is listed, keeping the results it carries (or
  // a Lease under an earlier version's hashed name carried).
  Status Register();

  const std::map<std::string, NodeResult>& results() const { return results_; }
  const std::map<std::string, NodeRequest>& requests() const { return requests_; }
  NodePresence Presence() const;

  // Records a result and writes the Lease.
  Status PutResult(const std::string& uid, const NodeResult& result);
  // Forgets a result without a write of its own: the next write leaves it out.
  void ForgetResult(const std::string& uid) { results_.erase(uid); }
  // Adds or removes a request without a write; Write() carries it.
  void Request(const std::string& uid, const NodeRequest& request) { requests_[uid] = request; }
  void Unrequest(const std::string& uid) { requests_.erase(uid); }
  // Removes a request, written away at once when the Lease carries it (a coordinator reading it
  // would grant a slot nobody takes).
  void Withdraw(const std::string& uid);
  // Writes the Lease as it should be now.
  Status Write();
  // One renewal round: notes the Node leaving or coming back, writes the Lease again when it was
  // deleted, its Node or labels changed, or a failed write is due.
  void Renew();

 private:
  // The results encoded for the Lease; logs when results start or stop being left out.
  std::string NoteResultsBudget();
  Status WriteLease(RolloutLease& lease);
  void NoteNodePresence();
  // Whether the Lease as the board shows it was written by someone else since this node's last
  // write, and says something else than that write did.
  bool EditedElsewhere(const RolloutLease& seen) const;
  void Know(const std::string& version);  // the Lease's version now (its write, or a read)

  const WatchedResource& resource_;
  const std::string rid_;
  KubeClient& client_;
  const BoardReader& board_;
  Clock& monotonic_;
  const ServerClock& server_;
  const NodeLeaseWriterOptions options_;

  std::string version_;                          // the Lease's resourceVersion ("" = create)
  std::vector<std::string> known_versions_;      // the last versions written or read here
  std::map<std::string, NodeResult> results_;    // what the Lease says
  std::map<std::string, NodeRequest> requests_;  // the object states it asks for
  // The requests the Lease carries (a request left there after the node entered is harmless
  // while it holds the slot, and withdrawn when it gives the slot up).
  std::map<std::string, NodeRequest> requests_written_;
  size_t results_written_ = 0;  // how many results the last write carried
  bool dirty_ = false;          // not yet written as it should be
  int refusals_ = 0;            // writes failed in a row
  TimePoint retry_at_;          // monotonic; the next try of a failed write
  size_t results_left_out_ = 0;  // done results over the budget
  std::string owner_written_;    // the Node uid the Lease names
  std::optional<LabelMap> labels_written_;
  bool left_ = false;  // its Node is gone (logged once)
};

}  // namespace nodehook
