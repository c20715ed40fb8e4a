// The one rule for a live slot (board_view.h), checked once for both of its readers: the agent's
// RolloutBoard, which ages a Lease by the time since its watch brought the change (a fake
// monotonic clock here), and kubectl's BoardFromLeases, which ages it by the API server's clock
// minus renewTime. Every row must come out the same for both.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "agent/base/utc_time.h"
#include "agent/rollout/rules/board_view.h"
#include "agent/rollout/board/rollout_board.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

constexpr int64_t kRenewedMs = 1'800'000'000'000;  // by the API server's clock

RolloutLease Slot(const std::string& holder, int duration_s, const std::string& version = "7") {
  RolloutLease l;
  l.name = SlotLeaseName("rid", 0);
  l.kind = "slot";
  l.slot = 0;
  l.holder = holder;
  l.uid = "u1";
  l.state = "s1";
  l.lease_duration_seconds = duration_s;
  l.renew_time = MicroTime(FromMillis(kRenewedMs));
  l.resource_version = version;
  return l;
}

RolloutLease NodeLeaseOf(const std::string& holder) {
  RolloutLease l;
  l.name = NodeLeaseName("rid", holder.empty() ? "nobody" : holder);
  l.kind = "node";
  l.holder = holder;
  l.lease_duration_seconds = 86400;
  l.results["u1"] = NodeResult{"s1", false, kRenewedMs, "ok"};
  return l;
}

// The Lease as the agent's watch hands it over: its JSON, as the API server would send it.
ObjectPtr AsObject(const RolloutLease& lease) {
  auto object = std::make_shared<KubeObject>();
  object->meta = ObjectMeta{"uid-" + lease.name, "nodehook", lease.name, lease.resource_version, false};
  object->json = RolloutLeaseJson("nodehook", "rid", lease);
  return object;
}

struct Row {
  const char* what;
  std::string holder;
  int duration_s;
  int64_t age_ms;
  bool live;
};

}  // namespace

TEST_CASE("a slot is live while held and younger than its duration, for the agent and kubectl alike") {
  const std::vector<Row> rows = {
      {"held, just renewed", "node-a", 15, 0, true},
      {"held, a moment before it expires", "node-a", 15, 14'999, true},
      {"held, exactly its duration old", "node-a", 15, 15'000, false},
      {"held, long unrenewed (its holder was killed)", "node-a", 15, 60'000, false},
      {"soaking: the duration is what is left of the soak", "node-a", 3, 2'900, true},
      {"soaked", "node-a", 3, 3'000, false},
      {"released, just now", "", 1, 0, false},
      {"released, long ago", "", 15, 60'000, false},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    RolloutLease slot = Slot(row.holder, row.duration_s);
    CHECK(SlotLive(slot, Duration(row.age_ms)) == row.live);

    BoardView kubectl = BoardFromLeases({slot}, kRenewedMs + row.age_ms);
    REQUIRE(kubectl.slots.size() == 1);
    CHECK(kubectl.slots[0].live == row.live);

    FakeClock monotonic;
    RolloutBoard agent(monotonic);
    agent.OnListed({AsObject(slot)}, {});
    monotonic.Advance(Duration(row.age_ms));
    BoardView seen = agent.View();
    REQUIRE(seen.slots.size() == 1);
    CHECK(seen.slots[0].live == row.live);
    CHECK(seen.slots[0].resource_version == "7");
  }
}

TEST_CASE("an age nobody can tell counts as free: kubectl cannot read a slot without a renewTime") {
  RolloutLease slot = Slot("node-a", 15);
  CHECK_FALSE(SlotLive(slot, std::nullopt));
  slot.renew_time = "";
  CHECK_FALSE(AgeByServerClock(slot, kRenewedMs).has_value());
  CHECK_FALSE(BoardFromLeases({slot}, kRenewedMs).slots.at(0).live);
}

TEST_CASE("the agent ages a Lease from its last change, not from each delivery or relist") {
  FakeClock monotonic;
  RolloutBoard agent(monotonic);
  agent.OnListed({AsObject(Slot("node-a", 15, "7"))}, {});
  monotonic.Advance(std::chrono::seconds(10));
  agent.OnObject(AsObject(Slot("node-a", 15, "7")));  // the same version again: no change
  agent.OnListed({AsObject(Slot("node-a", 15, "7"))}, {});
  monotonic.Advance(std::chrono::seconds(5));
  CHECK_FALSE(agent.View().slots.at(0).live);  // 15 s since it changed
  agent.OnObject(AsObject(Slot("node-a", 15, "8")));  // renewed
  CHECK(agent.View().slots.at(0).live);
}

TEST_CASE("node Leases put their holder's results on the board; a node Lease without a holder is nobody's") {
  std::vector<RolloutLease> leases = {NodeLeaseOf("node-a"), NodeLeaseOf("")};
  BoardView kubectl = BoardFromLeases(leases, kRenewedMs);
  FakeClock monotonic;
  RolloutBoard agent(monotonic);
  agent.OnListed({AsObject(leases[0]), AsObject(leases[1])}, {});
  for (const BoardView& board : {kubectl, agent.View()}) {
    REQUIRE(board.nodes.size() == 1);
    CHECK(board.nodes.at("node-a").at("u1").state == "s1");
    CHECK(board.slots.empty());
  }
}

}  // namespace nodehook
