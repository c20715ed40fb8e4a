// NodeAsks: when this node asks its rollout's coordinator for a slot, and when it asks again.
//
// First asks are spread out: a node delays its first ask for an object state by its place among
// the nodes (AskPlace) times fleet_size / (kAsksPerGrant * max_grants_per_second) seconds (at most
// kAskSpreadMax), and asks then for every object state due within kAskBatch in one write: however
// many objects change at once, the fleet's asks reach the API server at about kAsksPerGrant times
// the grant rate, not all at once, and still faster than they are granted.
//
// Asking again matters because of how the coordinator treats a grant that lapsed untaken: it
// withdraws it and grants that node nothing more for the object until the node's Lease changes
// (coordinator/rollout_coordinator.h), so a node that asked and died never holds the rollout. A
// live node that missed its grant must therefore write its Lease once more, or wait for ever. It
// asks again, once per cause:
//   lapsed    a grant to it for the state that it saw and did not take is no longer its live slot
//             (it lapsed, or the slot went to another node): its worker was busy, or the agent was
//             stopped (SIGSTOP, a frozen VM) and read the grant and its withdrawal only on waking;
//             asked at once.
//   relisted  its board was listed again since it last wrote its Lease: the watch was away, and a
//             grant may have come and gone unseen; spread out like a first ask, since an API
//             server restart relists every node at once.
// Not thread-safe: RolloutGate owns it and calls it under its lock. Borrows the board and clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/rollout/board/rollout_board.h"
#include "agent/rollout/rules/node_requests.h"

namespace nodehook {

inline constexpr double kAsksPerGrant = 4;
inline constexpr Duration kAskSpreadMax = std::chrono::seconds(60);
inline constexpr Duration kAskBatch = std::chrono::seconds(1);

// A node's place among the nodes of a rollout, in [0, 1): a hash of the rollout and the node, the
// same for every object, so a node's asks for objects that changed together come due together.
double AskPlace(const std::string& rid, const std::string& node);

enum class AskAgain { kNo, kLapsed, kRelisted };

class NodeAsks {
 public:
  // `fleet_size`: how many nodes the rollout has, as its coordinator last said; 0 or empty: not
  // known (no spread).
  NodeAsks(const std::string& rid, std::string node, const RolloutPolicy& policy, const BoardReader& board,
           Clock& monotonic, std::function<int()> fleet_size);

  // A slot the board now shows in this node's name for an object state (a grant, or a slot held
  // before a restart).
  void NoteGrant(const std::string& uid, const std::string& state, const std::string& version);
  // Whether the ask for the object state, which the node Lease may carry already, is written
  // again, and why. `view` is the node's own (its held slot laid over the board). Says kLapsed once
  // per grant, and kRelisted until the Lease is written.
  AskAgain Again(const BoardView& view, const std::string& uid, const std::string& state);
  // How long before the node asks for the object state; nullopt: now. `asked`: the request the
  // node Lease carries for the object, if any.
  std::optional<Duration> Due(const std::string& uid, const NodeRequest& request, const NodeRequest* asked,
                              AskAgain again);
  // The asks that come due within kAskBatch, taken out: they go in the write being made.
  std::vector<std::pair<std::string, NodeRequest>> TakeDueSoon(size_t room);
  // The ask for the object goes in the write being made.
  void Asking(const std::string& uid) { due_.erase(uid); }
  // The node Lease was written with every ask it has (or tried: a failed write is retried by its
  // writer, backing off): a relist before this is answered.
  void Written() { lists_written_ = board_.lists(); }
  // The node took its slot for the object: its grant is used.
  void Taken(const std::string& uid) { seen_.erase(uid); }
  // The object is gone: nothing of it is asked for again.
  void Forget(const std::string& uid);

 private:
  struct DueAt {
    NodeRequest request;
    TimePoint at;  // monotonic
  };
  struct Seen {
    std::string state;
    std::string version;
  };

  const std::string rid_;
  const std::string node_;
  const RolloutPolicy& policy_;
  const BoardReader& board_;
  Clock& monotonic_;
  const std::function<int()> fleet_size_;
  std::map<std::string, DueAt> due_;          // asks spread out, by uid
  std::map<std::string, Seen> seen_;          // grants seen and not taken, by uid
  std::map<std::string, std::string> asked_;  // by uid, the version of the lapsed grant asked again for
  uint64_t lists_written_ = 0;                // the board's lists when the node Lease was last written
};

}  // namespace nodehook
