// RolloutCoordinator: the one reader of a rollout's node Leases, so that the API server's work
// per gated change per node stays flat as the fleet grows (docs/fleet-cost.md). Each node asks
// for the object states it waits to run (requests on its own node Lease, node_requests.h); the
// coordinator judges them with the same rules every reader uses (rollout_judge.h: canaries,
// halts, targeting, holds, windows, max_nodes) on its board of every Lease of the rollout, and
// grants a free slot by writing the slot Lease in the node's name. The node then renews the slot
// as its own (node/rollout_gate.h), so a killed holder's slot still frees itself within its lease and
// the fence still stops its hook first.
// Never more than max_nodes inside, whoever coordinates: a grant is a write of a free slot Lease
// conditioned on the resourceVersion it judged, so two coordinators (an old one that has not yet
// seen its term end, and the new one) cannot both grant one slot; a new coordinator's board
// counts each slot it lists as held for a whole lease from the moment it saw it.
// Grants are paced: at most max_grants_per_second, a second's worth at once (a token bucket on the
// API server's clock), so the writes each grant starts (take, renewals, result, release) come at a
// bounded rate whatever the fleet's size; the asks a pace holds back are granted at later rounds,
// in rollout order.
// A grant that lapses untaken (the slot never written by its node within its lease) is withdrawn:
// its node asked and then died, or is cut off. That node is granted nothing more for the object
// until its node Lease changes (a live agent asks again when it sees its grant lapse; a restarted
// one writes its Lease), so a dead asker does not take the slot again at every lease.
// It also posts RolloutHalted and RolloutCompleted, once per object state it saw requested, and
// through coordinator handovers: the states whose Events it still owes go to its successor
// (Handover, written on the coordinator Lease; TakeOver), so a state whose last grants came
// before a handover is still reported complete, once (the Event's name is derived from the
// object, the reason and the state: a repeat within the Events' lifetime is refused as existing).
// Not thread-safe: one thread calls Round (rollout_coordination.h). Borrows the client, clock and
// events, which must outlive it.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/events/event_recorder.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/board/rollout_board.h"
#include "agent/rollout/rules/rollout_judge.h"

namespace nodehook {

struct RolloutCoordinatorOptions {
  std::string namespace_name;                        // where the Leases live
  std::function<WindowNow(int64_t now_ms)> windows;  // whether a window is open; empty: always
  // The Nodes the rollout keeps cordoned (cordoned_nodes.h), counted against max_nodes; empty:
  // none (a rollout without node steps cordons nothing).
  std::function<std::map<std::string, std::string>()> cordoned{};
};

inline constexpr size_t kMaxHandover = 200;

class RolloutCoordinator {
 public:
  RolloutCoordinator(const WatchedResource& resource, KubeClient& client, const ServerClock& server,
                     EventRecorder& events, RolloutCoordinatorOptions options);

  // One round on the board as it is now: grants for the requests the rules admit, then the
  // halts and completions to post. Returns the number of slots granted.
  int Round(const BoardReader& board);

  // The object states whose outcome Events it still owes (at most kMaxHandover), for its
  // successor: {"states": {"<uid>/<state>": request...}, "halted": ["<uid>/<state>", ...]}; "" when none.
  std::string Handover() const;
  // Takes up a predecessor's Handover(); an unreadable one is logged and left.
  void TakeOver(const std::string& handover);

 private:
  // An object state some node asked for: what its Events need.
  struct Tracked {
    ObjectMeta object;
    NodeRequest request;
    bool halted_posted = false;
  };
  void Track(const BoardView& view);
  enum class Granting {
    kGoOn,  // on to the next object state
    kFull,  // no place left below max_nodes: later states only for nodes the rollout keeps cordoned
    kStop,  // paced, or refused: no more grants this round
  };
  // Grants for the requests of one object state, in its rollout order. `asked`: the nodes that
  // asked, each with whether its work on the state started. `full`: only nodes the rollout keeps
  // cordoned already may enter.
  Granting GrantFor(BoardView& view, const std::string& uid, const NodeRequest& request,
                    const std::map<std::string, bool>& asked, bool full, const WindowNow& window, int64_t now_ms,
                    int* granted);
  Status Grant(BoardView& view, const std::string& node, const std::string& uid, const NodeRequest& request,
               const RolloutAdmission& admission, bool canary);
  void PostOutcomes(const BoardView& view, int64_t now_ms);
  // Withdraws the grants that lapsed untaken (see above).
  void NoteLapsedGrants(const BoardReader& board, const BoardView& view);
  // Whether the node's ask for the object state is one withdrawn (its node Lease unchanged since).
  bool Withdrawn(const BoardReader& board, const std::string& node, const std::string& uid, const std::string& state);

  const WatchedResource& resource_;
  const RolloutPolicy& policy_;
  const std::string rid_;
  KubeClient& client_;
  const ServerClock& server_;
  EventRecorder& events_;
  const RolloutCoordinatorOptions options_;
  std::map<std::string, Tracked> tracked_;  // by object uid and state
  struct GrantMade {
    std::string node, uid, state;
    std::string version;  // the slot Lease's version after the grant ("" until seen, for a create)
  };
  std::map<int, GrantMade> granted_;  // by slot: grants not taken yet
  struct WithdrawnAsk {
    std::string state;
    std::string node_version;  // the node Lease's version when its grant was withdrawn
  };
  std::map<std::pair<std::string, std::string>, WithdrawnAsk> withdrawn_;  // by node and object uid
  // Grants refused in a row for a lasting reason (403, 422, the server away), and the server
  // time before which no grant is tried again: doubling from a second to a minute.
  int refusals_ = 0;
  int64_t grants_after_ms_ = 0;
  // The pace: grants it may make now, refilled at max_grants_per_second up to a second's worth.
  bool TakeGrantToken(int64_t now_ms);
  double grant_tokens_ = 0;
  int64_t tokens_at_ms_ = -1;
};

}  // namespace nodehook
