// The rollout's rules, from values alone: whether a node may enter the gate for one object state
// now, and if not, why and until when; and what every node is doing about it (for `kubectl
// nodehook rollout status|plan`). The agent's gate and kubectl judge with the same function, so
// what `status` says a node waits for is what that node's agent decides.
//   - a node that already holds a slot for this state goes on in it (a restarted agent takes its
//     own slot back, never a second one); a slot held for another object: busy; a newer state of
//     the object takes its slot over only past that state's canaries, or it gives the slot up;
//   - work that started (RolloutObject::started: its node steps hold the node) goes on whatever
//     pauses, holds, halts, windows and canaries say: in its own slot, or in a free one;
//   - the object paused (annotation), the node held (Node label): wait;
//   - halted: max_failed_nodes nodes failed this state, or a canary did (until a resume of it);
//   - outside every window: wait until the next opens;
//   - not a canary: wait until every canary has succeeded and soaked (canaries: the first
//     canary_nodes nodes the object targets that are not held);
//   - a free slot below max_nodes: enter it; none: wait. Nodes that carry the rollout's cordon
//     (BoardView::cordoned, where the reader knows them) count against max_nodes whether or not
//     they hold a slot: the limit counts disruption, not slots.
// Canaries are the first canary_nodes nodes in an order drawn from the object state, so each
// new state picks its own, and every agent computes the same list.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/rollout/rules/board_view.h"
#include "agent/rollout/rules/rollout_leases.h"
#include "agent/rollout/rules/window.h"  // WindowNow: whether the windows are open (the caller loads the zones)

namespace nodehook {

struct RolloutObject {
  std::string uid;
  std::string state;         // digest of the object state
  bool paused = false;       // kRolloutPausedAnnotation
  std::string resume_state;  // kRolloutResumeAnnotation: a halted state that goes on anyway
  // Its node selector (the resource's node_selector_path); nullopt: every node. Only the nodes it
  // targets, by the labels on their node Leases, are drawn as canaries and awaited for completion.
  std::optional<LabelMap> selector{};
  // The node's work on this state started and holds the node (a cordon, a drain, a reboot): it
  // goes on, never stopped by a pause, hold, halt, window or canary (they stop new work only).
  bool started = false;
};

// The selector a RolloutObject carries for what lies at the resource's node selector path:
// nullopt (every node) when absent or empty, as node targeting takes them.
std::optional<LabelMap> RolloutSelector(const NodeSelectorLookup& lookup);

// kQueued: asked the rollout's coordinator, which has not granted a slot yet (it judges the rest).
enum class WaitReason { kNone, kBusy, kPaused, kHeld, kHalted, kOutsideWindow, kCanariesPending, kNoFreeSlot, kQueued };
// Stable names, used in logs, metrics and kubectl output.
const char* WaitReasonName(WaitReason reason);

struct RolloutAdmission {
  bool enter = false;
  int slot = -1;           // with enter: the slot to take (or already held)
  bool own = false;        // with enter: the slot is already this node's
  // Without enter: this node holds a running slot for the object, and a pause, hold, halt or
  // closed window says it may not run there now (a retry, or a restart): it gives the slot up.
  bool give_up_own = false;
  // With enter: the slot Lease's resourceVersion in the view that was judged ("" when it never
  // existed). The take is conditioned on it, so a slot that another node took since the view was
  // read is refused by the API server, never taken from its holder.
  std::string slot_version;
  WaitReason wait = WaitReason::kNone;
  std::string detail;      // for people: which nodes failed, which canaries are pending, ...
  int64_t until_ms = 0;    // kOutsideWindow: when the next window opens (0: unknown)
};

RolloutAdmission Judge(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object,
                const std::string& node, bool held, const WindowNow& window, int64_t now_ms);

// What keeps a node from starting the object's gated hook whatever the fleet does (wait kNone if
// nothing): the object paused, the node held, every window closed. A node judges this itself
// before it asks the coordinator, which judges the rest for it.
RolloutAdmission NodeStopped(const RolloutPolicy& policy, const RolloutObject& object, bool held,
                             const WindowNow& window);

// Whether the node's labels on the board carry the policy's hold label.
bool HeldOnBoard(const RolloutPolicy& policy, const BoardView& board, const std::string& node);

// Whether the object targets the node, by the labels on its node Lease: a node whose labels are
// unknown is targeted only by objects without a selector, as its own agent decides
// (targeting/node_labels.h).
bool Targets(const BoardView& board, const std::string& node, const RolloutObject& object);

// Every node of the board that the object targets, in rollout order for this object state:
// canaries first. Canaries are the first canary_nodes of them that are not held (a held node
// that already has a result for the state stays one), so a held node does not stop the fleet.
std::vector<std::string> RolloutOrder(const BoardView& board, const RolloutObject& object);
std::vector<std::string> Canaries(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object);

// The nodes that failed this state, and whether the state is halted (before any resume).
std::vector<std::string> FailedNodes(const BoardView& board, const RolloutObject& object);
bool Halted(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object, std::string* why);


struct NodeStatus {
  std::string node;
  NodeStep phase = NodeStep::kWaiting;
  bool canary = false;
  RolloutAdmission admission;  // kWaiting: why (its `enter` means it may start now)
  std::string message;  // the node's last message for this state
  std::string detail;   // inside the gate: how far its step got
};

// Every node's status for the object, in rollout order. `held`: nodes whose hold label is set.
std::vector<NodeStatus> RolloutStatus(const RolloutPolicy& policy, const BoardView& board,
                                      const RolloutObject& object, const std::vector<std::string>& held,
                                      const WindowNow& window, int64_t now_ms);

// Every node of the board has finished this state (done and soaked).
bool RolloutComplete(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object, int64_t now_ms);

}  // namespace nodehook
