#include "agent/rollout/rules/rollout_judge.h"

#include <algorithm>
#include <set>

#include "agent/object/essence.h"

namespace nodehook {
namespace {

const NodeResult* ResultOf(const BoardView& board, const std::string& node, const RolloutObject& object) {
  auto n = board.nodes.find(node);
  if (n == board.nodes.end()) return nullptr;
  auto r = n->second.find(object.uid);
  if (r == n->second.end() || r->second.state != object.state) return nullptr;
  return &r->second;
}


bool Soaked(const RolloutPolicy& policy, const NodeResult& result, int64_t now_ms) {
  return !result.failed && result.at_ms + policy.soak.count() * 1000 <= now_ms;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

RolloutAdmission Waiting(WaitReason reason, std::string detail, int64_t until_ms = 0) {
  RolloutAdmission a;
  a.wait = reason;
  a.detail = std::move(detail);
  a.until_ms = until_ms;
  return a;
}

}  // namespace

bool Targets(const BoardView& board, const std::string& node, const RolloutObject& object) {
  if (!object.selector) return true;
  auto labels = board.labels.find(node);
  if (labels == board.labels.end() || !labels->second) return false;
  for (const auto& [key, value] : *object.selector) {
    auto it = labels->second->find(key);
    if (it == labels->second->end() || it->second != value) return false;
  }
  return true;
}

bool HeldOnBoard(const RolloutPolicy& policy, const BoardView& board, const std::string& node) {
  auto labels = board.labels.find(node);
  return labels != board.labels.end() && labels->second && labels->second->count(policy.hold_label) > 0;
}

std::optional<LabelMap> RolloutSelector(const NodeSelectorLookup& lookup) {
  if (lookup.kind != NodeSelectorLookup::Kind::kSelector || lookup.selector.empty()) return std::nullopt;
  return lookup.selector;
}

const char* WaitReasonName(WaitReason reason) {
  switch (reason) {
    case WaitReason::kNone: return "none";
    case WaitReason::kBusy: return "busy";
    case WaitReason::kPaused: return "paused";
    case WaitReason::kHeld: return "held";
    case WaitReason::kHalted: return "halted";
    case WaitReason::kOutsideWindow: return "outside_window";
    case WaitReason::kCanariesPending: return "canaries_pending";
    case WaitReason::kNoFreeSlot: return "no_free_slot";
    case WaitReason::kQueued: return "queued";
  }
  return "none";
}

std::vector<std::string> RolloutOrder(const BoardView& board, const RolloutObject& object) {
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const auto& [node, results] : board.nodes) {
    if (Targets(board, node, object)) keyed.emplace_back(EssenceDigest(object.uid + "/" + object.state + "/" + node), node);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::string> order;
  order.reserve(keyed.size());
  for (auto& [key, node] : keyed) order.push_back(std::move(node));
  return order;
}

std::vector<std::string> Canaries(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object) {
  std::vector<std::string> canaries;
  const size_t wanted = static_cast<size_t>(std::max(policy.canary_nodes, 0));
  for (auto& node : RolloutOrder(board, object)) {
    if (canaries.size() >= wanted) break;
    if (!HeldOnBoard(policy, board, node) || ResultOf(board, node, object)) canaries.push_back(std::move(node));
  }
  return canaries;
}

std::vector<std::string> FailedNodes(const BoardView& board, const RolloutObject& object) {
  std::vector<std::string> failed;
  for (const auto& [node, results] : board.nodes) {
    const NodeResult* r = ResultOf(board, node, object);
    if (r && r->failed) failed.push_back(node);
  }
  return failed;
}

bool Halted(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object, std::string* why) {
  std::vector<std::string> failed = FailedNodes(board, object);
  if (failed.empty()) return false;
  for (const auto& node : failed) {
    if (ResultOf(board, node, object)->canary) {
      if (why) *why = "canary " + node + " failed";
      return true;
    }
  }
  for (const auto& canary : Canaries(policy, board, object)) {
    if (std::find(failed.begin(), failed.end(), canary) != failed.end()) {
      if (why) *why = "canary " + canary + " failed";
      return true;
    }
  }
  const int targeted = static_cast<int>(RolloutOrder(board, object).size());
  int limit = std::max(policy.max_failed_nodes.Resolve(targeted), 1);
  if (static_cast<int>(failed.size()) < limit) return false;
  if (why) *why = std::to_string(failed.size()) + " nodes failed (" + JoinNames(failed) + ")";
  return true;
}

namespace {

// What keeps any node of the fleet from starting the object's gated hook now; wait kNone if nothing.
RolloutAdmission Stopped(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object, bool held,
                         const WindowNow& window) {
  if (object.paused) return Waiting(WaitReason::kPaused, std::string("annotation ") + kRolloutPausedAnnotation);
  if (held) return Waiting(WaitReason::kHeld, "node label " + policy.hold_label);
  std::string why;
  if (object.resume_state != object.state && Halted(policy, board, object, &why)) {
    return Waiting(WaitReason::kHalted, why);
  }
  if (!window.open) return Waiting(WaitReason::kOutsideWindow, "outside every window", window.next_open_ms);
  return RolloutAdmission{};
}

}  // namespace

RolloutAdmission NodeStopped(const RolloutPolicy& policy, const RolloutObject& object, bool held,
                             const WindowNow& window) {
  if (object.paused) return Waiting(WaitReason::kPaused, std::string("annotation ") + kRolloutPausedAnnotation);
  if (held) return Waiting(WaitReason::kHeld, "node label " + policy.hold_label);
  if (!window.open) return Waiting(WaitReason::kOutsideWindow, "outside every window", window.next_open_ms);
  return RolloutAdmission{};
}

namespace {

// The canaries of the state that `node` waits for: none when it is one, or when they are all done
// and soaked (or, for a resumed state, failed).
std::vector<std::string> PendingCanaries(const RolloutPolicy& policy, const BoardView& board,
                                         const RolloutObject& object, const std::string& node, int64_t now_ms) {
  std::vector<std::string> canaries = Canaries(policy, board, object);
  std::vector<std::string> pending;
  if (std::find(canaries.begin(), canaries.end(), node) != canaries.end()) return pending;
  const bool resumed = object.resume_state == object.state;
  for (const auto& canary : canaries) {
    const NodeResult* r = ResultOf(board, canary, object);
    // A resumed state goes on past the canaries that failed it (the person who resumed it
    // accepted that): a permanent failure would never be retried, and the fleet would wait.
    if (r && r->failed && resumed) continue;
    if (!r || !Soaked(policy, *r, now_ms)) pending.push_back(canary);
  }
  return pending;
}

// What keeps the node from entering its own slot for the object: a retry or a restart starts the
// hook again, so it obeys pauses, holds, halts and windows; a newer state than the slot's takes
// it over only past its own canaries. Work that started goes on. Wait kNone: nothing.
RolloutAdmission OwnSlotStopped(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object,
                                const SlotView& slot, const std::string& node, bool held, const WindowNow& window,
                                int64_t now_ms) {
  if (object.started) return RolloutAdmission{};
  RolloutAdmission stop = Stopped(policy, board, object, held, window);
  if (stop.wait == WaitReason::kNone && slot.state != object.state) {
    std::vector<std::string> pending = PendingCanaries(policy, board, object, node, now_ms);
    if (!pending.empty()) stop = Waiting(WaitReason::kCanariesPending, "canaries " + JoinNames(pending));
  }
  return stop;
}

// The nodes the rollout disrupts now besides `node`: those holding a live slot and those its cordon
// marks keep cordoned.
std::set<std::string> DisruptedBesides(const BoardView& board, const std::string& node) {
  std::set<std::string> disrupted;
  for (const auto& s : board.slots) {
    if (s.live && s.holder != node) disrupted.insert(s.holder);
  }
  for (const auto& [cordoned, objects] : board.cordoned) {
    if (cordoned != node) disrupted.insert(cordoned);
  }
  return disrupted;
}

}  // namespace

RolloutAdmission Judge(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object,
                const std::string& node, bool held, const WindowNow& window, int64_t now_ms) {
  // This node's own slot first. The object's work it started goes on there, for the state it
  // has now: a fix after a failure is not made to wait for a slot its old state still holds.
  for (const auto& s : board.slots) {
    if (!s.live || s.holder != node) continue;
    if (s.uid == object.uid && s.phase != NodeStep::kSoaking) {
      RolloutAdmission stop = OwnSlotStopped(policy, board, object, s, node, held, window, now_ms);
      if (stop.wait != WaitReason::kNone) {
        stop.give_up_own = true;
        return stop;
      }
      RolloutAdmission a;
      a.enter = true;
      a.slot = s.slot;
      a.own = true;
      a.slot_version = s.resource_version;
      return a;
    }
    return Waiting(WaitReason::kBusy, std::string("this node is ") + NodeStepName(s.phase) + " another state in slot " +
                                          std::to_string(s.slot));
  }
  if (!object.started) {
    RolloutAdmission stop = Stopped(policy, board, object, held, window);
    if (stop.wait != WaitReason::kNone) return stop;
    std::vector<std::string> pending = PendingCanaries(policy, board, object, node, now_ms);
    if (!pending.empty()) return Waiting(WaitReason::kCanariesPending, "canaries " + JoinNames(pending));
  }
  const int limit = std::max(policy.max_nodes.Resolve(static_cast<int>(board.nodes.size())), 1);
  std::set<int> taken;
  for (const auto& s : board.slots) {
    if (s.live) taken.insert(s.slot);
  }
  if (static_cast<int>(taken.size()) >= limit) {
    return Waiting(WaitReason::kNoFreeSlot, std::to_string(taken.size()) + " of " + std::to_string(limit) + " slots held");
  }
  // The limit counts disruption: a node kept cordoned outside any slot takes a place too (the
  // node itself, cordoned already, adds none by entering).
  const std::set<std::string> disrupted = DisruptedBesides(board, node);
  if (static_cast<int>(disrupted.size()) >= limit) {
    std::vector<std::string> outside;
    for (const auto& [cordoned, objects] : board.cordoned) {
      if (cordoned != node) outside.push_back(cordoned);
    }
    return Waiting(WaitReason::kNoFreeSlot, std::to_string(disrupted.size()) + " of " + std::to_string(limit) +
                                                " nodes disrupted (cordoned by the rollout: " + JoinNames(outside) + ")");
  }
  // Each node tries the free slots from its own starting point, so nodes that ask at the same
  // moment mostly ask for different slots instead of racing for the lowest.
  const int offset = static_cast<int>(std::stoull(EssenceDigest(node), nullptr, 16) % static_cast<uint64_t>(limit));
  for (int k = 0; k < limit; ++k) {
    const int i = (offset + k) % limit;
    if (taken.count(i) == 0) {
      RolloutAdmission a;
      a.enter = true;
      a.slot = i;
      for (const auto& s : board.slots) {
        if (s.slot == i) a.slot_version = s.resource_version;  // released or expired: as seen
      }
      return a;
    }
  }
  return Waiting(WaitReason::kNoFreeSlot, "every slot held");
}

std::vector<NodeStatus> RolloutStatus(const RolloutPolicy& policy, const BoardView& board,
                                      const RolloutObject& object, const std::vector<std::string>& held,
                                      const WindowNow& window, int64_t now_ms) {
  std::vector<std::string> canaries = Canaries(policy, board, object);
  std::vector<NodeStatus> out;
  for (const auto& node : RolloutOrder(board, object)) {
    NodeStatus st;
    st.node = node;
    st.canary = std::find(canaries.begin(), canaries.end(), node) != canaries.end();
    const NodeResult* r = ResultOf(board, node, object);
    const SlotView* slot = nullptr;
    for (const auto& s : board.slots) {
      if (s.live && s.holder == node && s.uid == object.uid && s.state == object.state) slot = &s;
    }
    if (r) st.message = r->message;
    if (r && r->failed) {
      st.phase = NodeStep::kFailed;
    } else if (r) {
      st.phase = Soaked(policy, *r, now_ms) ? NodeStep::kDone : NodeStep::kSoaking;
    } else if (slot) {
      st.phase = slot->phase;
      st.detail = slot->detail;
    } else {
      bool is_held = std::find(held.begin(), held.end(), node) != held.end();
      st.admission = Judge(policy, board, object, node, is_held, window, now_ms);
    }
    auto cordoned = board.cordoned.find(node);
    const bool holds_a_slot = std::any_of(board.slots.begin(), board.slots.end(),
                                          [&](const SlotView& s) { return s.live && s.holder == node; });
    if (cordoned != board.cordoned.end() && !holds_a_slot) {
      // Counted against max_nodes though it holds no slot: said, so nobody wonders why others wait.
      st.detail += (st.detail.empty() ? "" : "; ") + std::string("cordoned by the rollout (") + cordoned->second +
                   "), outside any slot";
    }
    out.push_back(std::move(st));
  }
  return out;
}

bool RolloutComplete(const RolloutPolicy& policy, const BoardView& board, const RolloutObject& object, int64_t now_ms) {
  const std::vector<std::string> targeted = RolloutOrder(board, object);
  if (targeted.empty()) return false;
  for (const auto& node : targeted) {
    const NodeResult* r = ResultOf(board, node, object);
    if (!r || !Soaked(policy, *r, now_ms)) return false;
  }
  return true;
}

}  // namespace nodehook
