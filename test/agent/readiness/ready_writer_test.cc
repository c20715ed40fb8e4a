#include "agent/readiness/ready_writer.h"

#include <catch2/catch.hpp>

#include "test/fakes/fake_clock.h"
#include "test/fakes/in_memory_api.h"

namespace nodehook {
namespace {

struct Fleet {
  Fleet() {
    resource.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
    resource.ready_condition = "Ready";
  }
  ReadyObjectView Object(const std::string& version, int64_t generation, const std::string& state,
                         const std::string& conditions = "") {
    ReadyObjectView v;
    const std::string json = R"({"metadata":{"name":"w1","namespace":"ns","generation":)" + std::to_string(generation) +
                             "}" + (conditions.empty() ? "" : R"(,"status":{"conditions":)" + conditions + "}") + "}";
    v.object = std::make_shared<const KubeObject>(KubeObject{ObjectMeta{"u1", "ns", "w1", version, false}, json});
    v.target = RolloutObject{"u1", state, false, ""};
    v.generation = generation;
    v.kept = ReadReadiness(json, "Ready").kept;
    REQUIRE(ReadReadiness(json, "Ready").generation == generation);
    return v;
  }
  void Result(const std::string& node, const std::string& state, bool failed = false) {
    board.nodes[node]["u1"] = NodeResult{state, failed, 1, failed ? "boom" : "", false};
  }

  WatchedResource resource;
  InMemoryApi client;
  FakeClock wall, monotonic;
  BoardView board;
};

TEST_CASE("the writer writes the condition on transitions, guarded by the version it judged") {
  Fleet f;
  f.board.nodes = {{"n1", {}}, {"n2", {}}};
  ReadyWriter writer(f.resource, f.client, f.wall, f.monotonic);
  CHECK(writer.Round(f.board, {f.Object("10", 1, "s1")}) == 1);
  REQUIRE(f.client.patches().size() == 1);
  CHECK(f.client.patches()[0].first == "w1/status");
  CHECK(f.client.patches()[0].second.find(R"("resourceVersion":"10")") != std::string::npos);
  CHECK(f.client.patches()[0].second.find(R"("reason":"InProgress")") != std::string::npos);
  // Its write not back from the watch yet: not made twice.
  CHECK(writer.Round(f.board, {f.Object("10", 1, "s1")}) == 0);

  // Back, with one more node done: the message alone changed, nothing is written.
  const std::string in_progress =
      R"([{"type":"Ready","status":"False","reason":"InProgress","observedGeneration":1}])";
  f.Result("n1", "s1");
  CHECK(writer.Round(f.board, {f.Object("11", 1, "s1", in_progress)}) == 0);
  // The last node done: True.
  f.Result("n2", "s1");
  CHECK(writer.Round(f.board, {f.Object("11", 1, "s1", in_progress)}) == 1);
  CHECK(f.client.patches().back().second.find(R"("status":"True")") != std::string::npos);
}

TEST_CASE("a write refused by a concurrent change is made again on the next version") {
  Fleet f;
  f.Result("n1", "s1");
  ReadyWriter writer(f.resource, f.client, f.wall, f.monotonic);
  f.client.QueuePatchResult(Status(StatusCode::kConflict, "changed"));
  CHECK(writer.Round(f.board, {f.Object("10", 1, "s1")}) == 0);
  CHECK(writer.Round(f.board, {f.Object("12", 1, "s1", R"([{"type":"Other","status":"True"}])")}) == 1);
  CHECK(f.client.patches().back().second.find(R"({"type":"Other","status":"True"})") != std::string::npos);
}

TEST_CASE("a new generation is written even when the status stays; a server that fails is backed off") {
  Fleet f;
  f.Result("n1", "s2");
  ReadyWriter writer(f.resource, f.client, f.wall, f.monotonic);
  const std::string ready_1 = R"([{"type":"Ready","status":"True","reason":"AllNodesHandled","observedGeneration":1}])";
  f.client.QueuePatchResult(UnavailableError("away"));
  CHECK(writer.Round(f.board, {f.Object("20", 2, "s2", ready_1)}) == 0);
  CHECK(f.client.patches().size() == 1);
  CHECK(writer.Round(f.board, {f.Object("20", 2, "s2", ready_1)}) == 0);
  CHECK(f.client.patches().size() == 1);  // backing off
  f.monotonic.Advance(std::chrono::seconds(1));
  CHECK(writer.Round(f.board, {f.Object("20", 2, "s2", ready_1)}) == 1);
  CHECK(f.client.patches().back().second.find(R"("observedGeneration":2)") != std::string::npos);
}

}  // namespace
}  // namespace nodehook
