#include "agent/readiness/ready_judge.h"

#include <catch2/catch.hpp>

namespace nodehook {
namespace {

NodeResult Done(const std::string& state) { return NodeResult{state, false, 1, "", false}; }
NodeResult Failed(const std::string& state, const std::string& message) { return NodeResult{state, true, 1, message, false}; }

BoardView Board(std::map<std::string, std::map<std::string, NodeResult>> nodes) {
  BoardView board;
  board.nodes = std::move(nodes);
  for (const auto& [node, results] : board.nodes) board.labels[node] = LabelMap{{"zone", node == "n3" ? "b" : "a"}};
  return board;
}

TEST_CASE("an object is Ready once every node that handles it handled its current state") {
  RolloutObject w{"u1", "s2", false, ""};
  CHECK(JudgeReady(BoardView{}, w).reason == "NoNodes");
  auto all = JudgeReady(Board({{"n1", {{"u1", Done("s2")}}}, {"n2", {{"u1", Done("s2")}}}}), w);
  CHECK(all.status == "True");
  CHECK(all.reason == "AllNodesHandled");
  CHECK(all.message == "2/2 nodes");
  // A result for an earlier state is no result for this one.
  auto old = JudgeReady(Board({{"n1", {{"u1", Done("s2")}}}, {"n2", {{"u1", Done("s1")}}}, {"n3", {}}}), w);
  CHECK(old.status == "False");
  CHECK(old.reason == "InProgress");
  CHECK(old.message == "1/3 nodes; waiting for n2, n3");
}

TEST_CASE("a failure is never hidden behind in progress, and names its node and message") {
  RolloutObject w{"u1", "s2", false, ""};
  auto failing = JudgeReady(
      Board({{"n1", {{"u1", Done("s2")}}}, {"n2", {{"u1", Failed("s2", "create: disk full")}}}, {"n3", {}}}), w);
  CHECK(failing.status == "False");
  CHECK(failing.reason == "Failing");
  CHECK(failing.message == "1/3 nodes; failing on n2: create: disk full");
  // A failure of an earlier state is waited on, not reported.
  CHECK(JudgeReady(Board({{"n1", {{"u1", Failed("s1", "x")}}}}), w).reason == "InProgress");
}

TEST_CASE("only the nodes the object's selector targets count") {
  RolloutObject w{"u1", "s2", false, ""};
  w.selector = LabelMap{{"zone", "b"}};
  auto v = JudgeReady(Board({{"n1", {}}, {"n2", {}}, {"n3", {{"u1", Done("s2")}}}}), w);
  CHECK(v.status == "True");
  CHECK(v.message == "1/1 node");
  w.selector = LabelMap{{"zone", "nowhere"}};
  CHECK(JudgeReady(Board({{"n1", {}}}), w).reason == "NoNodes");
}

TEST_CASE("an object whose node selector is unreadable is no node's, and says so") {
  auto v = JudgeReady(Board({{"n1", {}}}), RolloutObject{"u1", "s", false, ""}, "a string, not a label map");
  CHECK(v.status == "False");
  CHECK(v.reason == "NodeSelectorUnreadable");
  CHECK(v.message == "no node acts on it: its node selector is unreadable (a string, not a label map)");
}

TEST_CASE("many waiting nodes are named up to three") {
  std::map<std::string, std::map<std::string, NodeResult>> nodes;
  for (int i = 0; i < 6; ++i) nodes["n" + std::to_string(i)] = {};
  CHECK(JudgeReady(Board(nodes), RolloutObject{"u1", "s", false, ""}).message ==
        "0/6 nodes; waiting for n0, n1, n2 and 3 more");
}

TEST_CASE("the condition is written when its status, reason or generation changes, not its message") {
  ReadyValue v{"False", "InProgress", "1/3 nodes"};
  CHECK(ReadyNeedsWrite(std::nullopt, v, 1));
  KeptCondition kept{"False", "InProgress", "0/3 nodes", 1};
  CHECK_FALSE(ReadyNeedsWrite(kept, v, 1));
  CHECK(ReadyNeedsWrite(kept, v, 2));
  CHECK(ReadyNeedsWrite(kept, ReadyValue{"False", "Failing", "x"}, 1));
  CHECK(ReadyNeedsWrite(kept, ReadyValue{"True", "AllNodesHandled", "3/3 nodes"}, 1));
}

TEST_CASE("the patch keeps the other conditions, and the transition time while the status stays") {
  const std::string object = R"({"metadata":{"name":"w"},"status":{"phase":"x","conditions":[
      {"type":"Synced","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},
      {"type":"Ready","status":"False","reason":"InProgress","observedGeneration":1,
       "lastTransitionTime":"2026-01-02T00:00:00Z"}]}})";
  CHECK(ReadReadiness(object, "Ready").generation == 0);
  CHECK(ReadReadiness(R"({"metadata":{"generation":4}})", "Ready").generation == 4);
  auto kept = ReadReadiness(object, "Ready").kept;
  REQUIRE(kept);
  CHECK(kept->reason == "InProgress");
  CHECK(kept->observed_generation == 1);
  CHECK_FALSE(ReadReadiness(object, "Other").kept);

  auto same_status = ReadyConditionPatch(object, "Ready", ReadyValue{"False", "Failing", "m"}, 2, "NOW", "7");
  REQUIRE(same_status.ok());
  CHECK(*same_status ==
        R"({"metadata":{"resourceVersion":"7"},"status":{"conditions":[{"type":"Synced","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},)"
        R"({"type":"Ready","status":"False","observedGeneration":2,"lastTransitionTime":"2026-01-02T00:00:00Z","reason":"Failing","message":"m"}]}})");
  auto flipped = ReadyConditionPatch(object, "Ready", ReadyValue{"True", "AllNodesHandled", "3/3 nodes"}, 2, "NOW", "7");
  REQUIRE(flipped.ok());
  CHECK(flipped->find(R"("lastTransitionTime":"NOW")") != std::string::npos);

  auto first = ReadyConditionPatch(R"({"metadata":{}})", "Ready", ReadyValue{"False", "NoNodes", "m"}, 1, "NOW", "3");
  REQUIRE(first.ok());
  CHECK(*first == R"({"metadata":{"resourceVersion":"3"},"status":{"conditions":[{"type":"Ready","status":"False",)"
                  R"("observedGeneration":1,"lastTransitionTime":"NOW","reason":"NoNodes","message":"m"}]}})");
  // Someone else's status.conditions that is no list is never written over.
  CHECK(ReadyConditionPatch(R"({"status":{"conditions":"odd"}})", "Ready", ReadyValue{}, 1, "NOW", "3").status().code() ==
        StatusCode::kInvalid);
}

}  // namespace
}  // namespace nodehook
