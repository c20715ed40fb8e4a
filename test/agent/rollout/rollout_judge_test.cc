// The rollout's rules on hand-built boards: slots, canaries, halts, holds, pauses and windows.
#include <catch2/catch.hpp>

#include "agent/rollout/rules/rollout_judge.h"

#include <set>

namespace nodehook {
namespace {

BoardView Fleet(int nodes) {
  BoardView board;
  for (int i = 0; i < nodes; ++i) board.nodes["n" + std::to_string(i)];
  return board;
}

const RolloutObject kObject{"u1", "s1", false, ""};

RolloutPolicy Policy(int max_nodes) {
  RolloutPolicy p;
  p.max_nodes = NodeCount{max_nodes, false};
  return p;
}

void Done(BoardView& board, const std::string& node, int64_t at_ms, bool failed = false) {
  board.nodes[node][kObject.uid] = NodeResult{kObject.state, failed, at_ms, failed ? "boom" : "ok"};
}

}  // namespace

TEST_CASE("a free slot below max_nodes lets a node in; a full gate makes it wait") {
  BoardView board = Fleet(4);
  RolloutAdmission first = Judge(Policy(2), board, kObject, "n0", false, WindowNow{}, 0);
  REQUIRE(first.enter);
  REQUIRE((first.slot == 0 || first.slot == 1));
  board.slots.push_back(SlotView{first.slot, "n0", "u1", "s1", NodeStep::kRunning, true});
  RolloutAdmission second = Judge(Policy(2), board, kObject, "n1", false, WindowNow{}, 0);
  CHECK(second.slot == 1 - first.slot);
  board.slots.push_back(SlotView{second.slot, "n1", "u1", "s1", NodeStep::kRunning, true});
  RolloutAdmission full = Judge(Policy(2), board, kObject, "n2", false, WindowNow{}, 0);
  CHECK_FALSE(full.enter);
  CHECK(full.wait == WaitReason::kNoFreeSlot);
  // An expired slot is free again, and its old holder gets no second one.
  board.slots[0].live = false;
  CHECK(Judge(Policy(2), board, kObject, "n2", false, WindowNow{}, 0).slot == first.slot);
}

TEST_CASE("an admission names the version of the slot as judged, for the take's precondition") {
  BoardView board = Fleet(3);
  CHECK(Judge(Policy(1), board, kObject, "n0", false, WindowNow{}, 0).slot_version.empty());  // never existed
  board.slots.push_back(SlotView{0, "", "u1", "s1", NodeStep::kRunning, false, "41"});        // released
  RolloutAdmission freed = Judge(Policy(1), board, kObject, "n0", false, WindowNow{}, 0);
  REQUIRE(freed.enter);
  CHECK(freed.slot_version == "41");
  board.slots[0] = SlotView{0, "n0", "u1", "s1", NodeStep::kRunning, true, "42"};  // its own, after a restart
  RolloutAdmission own = Judge(Policy(1), board, kObject, "n0", false, WindowNow{}, 0);
  REQUIRE(own.own);
  CHECK(own.slot_version == "42");
}

TEST_CASE("nodes asking at once start from different free slots") {
  BoardView board = Fleet(6);
  std::set<int> firsts;
  for (const auto& [node, _] : board.nodes) firsts.insert(Judge(Policy(4), board, kObject, node, false, WindowNow{}, 0).slot);
  CHECK(firsts.size() > 1);
}

TEST_CASE("a node that holds a slot for the object goes on in it, for a newer state too (without canaries); for another object it is busy") {
  BoardView board = Fleet(3);
  board.slots.push_back(SlotView{1, "n0", "u1", "s1", NodeStep::kRunning, true});
  RolloutAdmission again = Judge(Policy(1), board, kObject, "n0", false, WindowNow{}, 0);
  CHECK(again.enter);
  CHECK(again.own);
  CHECK(again.slot == 1);
  RolloutAdmission fixed = Judge(Policy(1), board, RolloutObject{"u1", "s2", false, ""}, "n0", false, WindowNow{}, 0);
  CHECK(fixed.enter);  // the object changed while its old state held the slot
  CHECK(fixed.own);
  CHECK(fixed.slot == 1);
  RolloutObject other{"u2", "s9", false, ""};
  CHECK(Judge(Policy(3), board, other, "n0", false, WindowNow{}, 0).wait == WaitReason::kBusy);
  board.slots[0].phase = NodeStep::kSoaking;  // a soak is not cut short by a newer state
  CHECK(Judge(Policy(1), board, RolloutObject{"u1", "s2", false, ""}, "n0", false, WindowNow{}, 0).wait ==
        WaitReason::kBusy);
}

TEST_CASE("a retry in its own slot obeys holds, pauses and windows: the node gives the slot up") {
  BoardView board = Fleet(3);
  board.slots.push_back(SlotView{1, "n0", "u1", "s1", NodeStep::kRunning, true});
  RolloutAdmission held = Judge(Policy(1), board, kObject, "n0", true, WindowNow{}, 0);
  CHECK_FALSE(held.enter);
  CHECK(held.wait == WaitReason::kHeld);
  CHECK(held.give_up_own);
  RolloutAdmission closed = Judge(Policy(1), board, kObject, "n0", false, WindowNow{false, 5000}, 0);
  CHECK(closed.wait == WaitReason::kOutsideWindow);
  CHECK(closed.until_ms == 5000);
  CHECK(closed.give_up_own);
  RolloutAdmission paused = Judge(Policy(1), board, RolloutObject{"u1", "s1", true, ""}, "n0", false, WindowNow{}, 0);
  CHECK(paused.wait == WaitReason::kPaused);
  CHECK(paused.give_up_own);
  // Another node's wait never gives anything up.
  CHECK_FALSE(Judge(Policy(1), board, kObject, "n1", true, WindowNow{}, 0).give_up_own);
}

TEST_CASE("percentages resolve against the nodes that handle the resource") {
  BoardView board = Fleet(10);
  RolloutPolicy p;
  p.max_nodes = NodeCount{25, true};  // 2.5 -> 3
  for (int i = 0; i < 3; ++i) board.slots.push_back(SlotView{i, "n" + std::to_string(i), "u1", "s1", NodeStep::kRunning, true});
  CHECK(Judge(p, board, kObject, "n5", false, WindowNow{}, 0).wait == WaitReason::kNoFreeSlot);
  CHECK(NodeCount{10, true}.Resolve(3) == 1);
  CHECK(NodeCount{0, true}.Resolve(3) == 0);
  CHECK(NodeCount{100, true}.Resolve(7) == 7);
}

TEST_CASE("canaries go first; the rest wait until every canary succeeded and soaked") {
  BoardView board = Fleet(5);
  RolloutPolicy p = Policy(5);
  p.canary_nodes = 2;
  p.soak = std::chrono::seconds(30);
  std::vector<std::string> canaries = Canaries(p, board, kObject);
  REQUIRE(canaries.size() == 2);
  std::string other;
  for (const auto& [node, _] : board.nodes) {
    if (node != canaries[0] && node != canaries[1]) other = node;
  }
  CHECK(Judge(p, board, kObject, canaries[1], false, WindowNow{}, 0).enter);
  CHECK(Judge(p, board, kObject, other, false, WindowNow{}, 0).wait == WaitReason::kCanariesPending);
  Done(board, canaries[0], 1000);
  Done(board, canaries[1], 2000);
  CHECK(Judge(p, board, kObject, other, false, WindowNow{}, 31'000).wait == WaitReason::kCanariesPending);  // soaking
  CHECK(Judge(p, board, kObject, other, false, WindowNow{}, 32'000).enter);
  // Each new state draws its own canaries from the same nodes.
  RolloutObject next{"u1", "s2", false, ""};
  CHECK(RolloutOrder(board, next).size() == 5);
}

TEST_CASE("a failed canary, or max_failed_nodes failed nodes, halt the state until it is resumed") {
  BoardView board = Fleet(6);
  RolloutPolicy p = Policy(2);
  p.canary_nodes = 1;
  std::string canary = Canaries(p, board, kObject)[0];
  Done(board, canary, 1, true);
  std::string why;
  CHECK(Halted(p, board, kObject, &why));
  CHECK(why == "canary " + canary + " failed");
  RolloutObject resumed = kObject;
  resumed.resume_state = kObject.state;
  std::string other = RolloutOrder(board, kObject)[3];
  CHECK(Judge(p, board, kObject, other, false, WindowNow{}, 0).wait == WaitReason::kHalted);
  CHECK(Judge(p, board, resumed, canary, false, WindowNow{}, 0).enter);

  BoardView plain = Fleet(6);
  RolloutPolicy q = Policy(2);
  q.max_failed_nodes = NodeCount{2, false};
  Done(plain, "n1", 1, true);
  CHECK_FALSE(Halted(q, plain, kObject, nullptr));
  Done(plain, "n4", 2, true);
  CHECK(Halted(q, plain, kObject, &why));
  CHECK(why == "2 nodes failed (n1,n4)");
  // A newer state of the object starts afresh.
  CHECK_FALSE(Halted(q, plain, RolloutObject{"u1", "s2", false, ""}, nullptr));
}

TEST_CASE("a paused object, a held node and a closed window wait, each with its reason") {
  BoardView board = Fleet(2);
  RolloutObject paused = kObject;
  paused.paused = true;
  CHECK(Judge(Policy(1), board, paused, "n0", false, WindowNow{}, 0).wait == WaitReason::kPaused);
  CHECK(Judge(Policy(1), board, kObject, "n0", true, WindowNow{}, 0).wait == WaitReason::kHeld);
  RolloutAdmission closed = Judge(Policy(1), board, kObject, "n0", false, WindowNow{false, 5000}, 0);
  CHECK(closed.wait == WaitReason::kOutsideWindow);
  CHECK(closed.until_ms == 5000);
}

TEST_CASE("status says what every node does, and completion needs every node done and soaked") {
  BoardView board = Fleet(4);
  RolloutPolicy p = Policy(1);
  p.soak = std::chrono::seconds(10);
  Done(board, "n0", 0);
  Done(board, "n1", 0, true);
  board.slots.push_back(SlotView{0, "n2", "u1", "s1", NodeStep::kVerifying, true});
  auto status = RolloutStatus(p, board, kObject, {"n3"}, WindowNow{}, 5000);
  std::map<std::string, NodeStep> phase;
  for (const auto& s : status) phase[s.node] = s.phase;
  CHECK(phase["n0"] == NodeStep::kSoaking);
  CHECK(phase["n1"] == NodeStep::kFailed);
  CHECK(phase["n2"] == NodeStep::kVerifying);
  CHECK(phase["n3"] == NodeStep::kWaiting);
  for (const auto& s : status) {
    if (s.node == "n3") CHECK(s.admission.wait == WaitReason::kHeld);
  }
  CHECK_FALSE(RolloutComplete(p, board, kObject, 20'000));
  Done(board, "n1", 0);
  Done(board, "n2", 0);
  Done(board, "n3", 0);
  CHECK_FALSE(RolloutComplete(p, board, kObject, 9'000));
  CHECK(RolloutComplete(p, board, kObject, 10'000));
}

TEST_CASE("a resumed state goes on past a canary that failed it; before the resume it is halted") {
  BoardView board = Fleet(4);
  RolloutPolicy p = Policy(2);
  p.canary_nodes = 1;
  const std::string canary = Canaries(p, board, kObject)[0];
  Done(board, canary, 0, true);  // failed, permanently: it will not try again
  const std::string other = canary == "n0" ? "n1" : "n0";
  CHECK(Judge(p, board, kObject, other, false, WindowNow{}, 1000).wait == WaitReason::kHalted);
  RolloutObject resumed{"u1", "s1", false, "s1"};
  RolloutAdmission a = Judge(p, board, resumed, other, false, WindowNow{}, 1000);
  CHECK(a.enter);
  // A canary still running (no result yet) holds the others back, resumed or not.
  BoardView running = Fleet(4);
  CHECK(Judge(p, running, resumed, other, false, WindowNow{}, 1000).wait == WaitReason::kCanariesPending);
}


TEST_CASE("only the nodes an object's selector targets are canaries and awaited for completion") {
  BoardView board = Fleet(6);
  for (int i = 0; i < 6; ++i) board.labels["n" + std::to_string(i)] = LabelMap{{"pool", i < 3 ? "gpu" : "cpu"}};
  board.labels["n5"] = std::nullopt;  // its agent has not seen its Node: targeted by no selector
  RolloutObject gpu = kObject;
  gpu.selector = LabelMap{{"pool", "gpu"}};
  RolloutPolicy policy = Policy(1);
  policy.canary_nodes = 2;
  std::vector<std::string> order = RolloutOrder(board, gpu);
  CHECK(std::set<std::string>(order.begin(), order.end()) == std::set<std::string>{"n0", "n1", "n2"});
  for (const auto& canary : Canaries(policy, board, gpu)) CHECK(canary < "n3");
  for (const char* n : {"n0", "n1"}) Done(board, n, 0);
  CHECK_FALSE(RolloutComplete(policy, board, gpu, 1));
  Done(board, "n2", 0);
  CHECK(RolloutComplete(policy, board, gpu, 1));       // n3..n5 never run it
  CHECK_FALSE(RolloutComplete(policy, board, kObject, 1));  // without a selector: every node
  CHECK(RolloutStatus(policy, board, gpu, {}, WindowNow{}, 1).size() == 3);
}

TEST_CASE("a held node is passed over as a canary, unless it already has a result for the state") {
  BoardView board = Fleet(4);
  RolloutPolicy policy = Policy(1);
  policy.canary_nodes = 1;
  const std::string first = RolloutOrder(board, kObject).front();
  const std::string second = RolloutOrder(board, kObject)[1];
  CHECK(Canaries(policy, board, kObject) == std::vector<std::string>{first});
  board.labels[first] = LabelMap{{policy.hold_label, "true"}};
  CHECK(Canaries(policy, board, kObject) == std::vector<std::string>{second});
  // The others wait for the canary that is not held, not for the held one.
  RolloutAdmission waiting = Judge(policy, board, kObject, RolloutOrder(board, kObject)[2], false, WindowNow{}, 0);
  CHECK(waiting.wait == WaitReason::kCanariesPending);
  CHECK(waiting.detail == "canaries " + second);
  Done(board, first, 0);  // it ran before it was held: it stays the canary
  CHECK(Canaries(policy, board, kObject) == std::vector<std::string>{first});
}


TEST_CASE("a canary's failure halts the state though nodes that joined since change who the canaries are") {
  BoardView board = Fleet(4);
  RolloutPolicy policy = Policy(1);
  policy.canary_nodes = 1;
  policy.max_failed_nodes = NodeCount{3, false};
  const std::string canary = Canaries(policy, board, kObject).front();
  Done(board, canary, 0, true);
  CHECK(Halted(policy, board, kObject, nullptr));
  // Nodes join until one of them comes first in this state's order.
  int joined = 0;
  while (RolloutOrder(board, kObject).front() == canary) board.nodes["joined" + std::to_string(joined++)];
  board.nodes[canary][kObject.uid].canary = false;  // as written before failures were marked
  CHECK_FALSE(Halted(policy, board, kObject, nullptr));
  board.nodes[canary][kObject.uid].canary = true;  // as its agent writes it now
  std::string why;
  CHECK(Halted(policy, board, kObject, &why));
  CHECK(why == "canary " + canary + " failed");
}

TEST_CASE("work that started goes on through pauses, holds, halts, windows and canaries: in its own slot or a free one") {
  BoardView board = Fleet(3);
  RolloutPolicy policy = Policy(1);
  policy.canary_nodes = 1;
  RolloutObject started{"u1", "s1", true, ""};  // paused
  started.started = true;
  // Its own slot: kept, not given up.
  board.slots.push_back(SlotView{0, "n1", "u1", "s1", NodeStep::kDraining, true});
  RolloutAdmission own = Judge(policy, board, started, "n1", true, WindowNow{false, 0}, 0);
  CHECK(own.enter);
  CHECK(own.own);
  CHECK_FALSE(own.give_up_own);
  // Its slot lapsed (the agent was away): a free one, past the pause, hold, window and canaries.
  board.slots[0].live = false;
  Done(board, "n0", 0, true);  // and a failed node: halted
  RolloutAdmission back = Judge(policy, board, started, "n1", true, WindowNow{false, 0}, 0);
  CHECK(back.enter);
  CHECK_FALSE(back.own);
  // New work waits as before.
  RolloutObject fresh = started;
  fresh.started = false;
  CHECK(Judge(policy, board, fresh, "n2", false, WindowNow{}, 0).wait == WaitReason::kPaused);
  // Still never past max_nodes.
  board.slots.push_back(SlotView{0, "n2", "u2", "s9", NodeStep::kRunning, true});
  CHECK(Judge(policy, board, started, "n1", false, WindowNow{}, 0).wait == WaitReason::kNoFreeSlot);
}

TEST_CASE("a newer state takes its object's slot over only past its own canaries") {
  BoardView board = Fleet(3);
  RolloutPolicy policy = Policy(1);
  policy.canary_nodes = 1;
  RolloutObject newer{"u1", "s2", false, ""};
  const std::string canary = Canaries(policy, board, newer).at(0);
  const std::string other = canary == "n0" ? "n1" : "n0";
  board.slots.push_back(SlotView{0, other, "u1", "s1", NodeStep::kDraining, true});
  RolloutAdmission waits = Judge(policy, board, newer, other, false, WindowNow{}, 0);
  CHECK(waits.wait == WaitReason::kCanariesPending);
  CHECK(waits.give_up_own);  // the older state's slot is given back, its steps end
  board.slots[0].holder = canary;
  RolloutAdmission takes = Judge(policy, board, newer, canary, false, WindowNow{}, 0);
  CHECK(takes.enter);
  CHECK(takes.own);
}

TEST_CASE("nodes the rollout keeps cordoned count against max_nodes, slot or not; the node itself adds none") {
  BoardView board = Fleet(4);
  board.cordoned["n0"] = "default/kernel";  // its agent away past its lease: its slot lapsed
  RolloutAdmission other = Judge(Policy(1), board, kObject, "n1", false, WindowNow{}, 0);
  CHECK_FALSE(other.enter);
  CHECK(other.wait == WaitReason::kNoFreeSlot);
  CHECK(other.detail == "1 of 1 nodes disrupted (cordoned by the rollout: n0)");
  CHECK(Judge(Policy(1), board, kObject, "n0", false, WindowNow{}, 0).enter);  // disrupted already
  CHECK(Judge(Policy(2), board, kObject, "n1", false, WindowNow{}, 0).enter);
  // A slot holder that is also cordoned counts once.
  board.slots.push_back(SlotView{0, "n0", "u1", "s1", NodeStep::kDraining, true});
  CHECK(Judge(Policy(2), board, kObject, "n1", false, WindowNow{}, 0).enter);
  board.cordoned["n3"] = "default/kernel";  // a failed node kept cordoned
  CHECK(Judge(Policy(2), board, kObject, "n1", false, WindowNow{}, 0).wait == WaitReason::kNoFreeSlot);
}

}  // namespace nodehook
