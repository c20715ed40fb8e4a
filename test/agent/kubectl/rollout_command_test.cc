// kubectl nodehook rollout status|plan|pause|resume and wait: read from the Leases, the object
// and the Nodes (a fake cluster), judged with the agents' rules; wait polls with a fake clock.
#include <catch2/catch.hpp>

#include <sstream>

#include "agent/app/rollout_command.h"
#include "agent/kubectl/fleet_wait.h"
#include "agent/kubectl/object_spec.h"
#include "agent/kubectl/rollout_report.h"
#include "test/agent/kubectl/rollout_fakes.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

constexpr int64_t kSecond = 1000;

RolloutPolicy Policy(int max_nodes, int canaries, int soak_s = 60, int max_failed = 2) {
  RolloutPolicy p;
  p.max_nodes = NodeCount{max_nodes, false};
  p.canary_nodes = canaries;
  p.soak = std::chrono::seconds(soak_s);
  p.max_failed_nodes = NodeCount{max_failed, false};
  return p;
}

// Four nodes handling widgets team-a/w1; the test decides what each did.
struct Board : FakeCommandWorld {
  RolloutPolicy policy = Policy(1, 1);
  KubeObject object = Widget("team-a", "w1", "u1", "7");
  std::vector<std::string> order;  // rollout order of node-1..node-4 for this state

  Board() {
    cluster.objects["team-a/w1"] = object;
    for (const char* n : {"node-1", "node-2", "node-3", "node-4"}) {
      cluster.nodes[n] = {};
      cluster.leases.push_back(NodeLease(n, policy));
    }
    BoardView board;
    for (const char* n : {"node-1", "node-2", "node-3", "node-4"}) board.nodes[n] = {};
    order = RolloutOrder(board, RolloutObject{"u1", DigestOf(object), false, ""});
  }
  int64_t now() const { return ToMillis(clock.Now()); }
  std::string digest() const { return DigestOf(object); }
  RolloutLease& LeaseOf(const std::string& node) {
    for (auto& l : cluster.leases) {
      if (l.kind == "node" && l.holder == node) return l;
    }
    throw std::runtime_error("no lease");
  }
  void Result(const std::string& node, bool failed, int64_t ago_ms, const std::string& message) {
    LeaseOf(node).results["u1"] = NodeResult{digest(), failed, now() - ago_ms, message};
  }
  void Running(int slot, const std::string& node) {
    cluster.leases.push_back(SlotLease(slot, node, "u1", digest(), NodeStep::kRunning, now() - 2 * kSecond));
  }
  void Annotate(const std::string& annotations) {
    object = Widget("team-a", "w1", "u1", "8", annotations);
    cluster.objects["team-a/w1"] = object;
  }


  bool stop_nodes = false;  // pause --stop-nodes
  int Run(const std::string& action, std::string* out, std::string* err = nullptr, const std::string& timeout = "10s",
          FleetSourceFactory fleet = nullptr, const std::string& spec = "widgets.example.com/w1") {
    FleetCommandArgs fleet_args;
    fleet_args.action = action;
    RolloutCommandArgs args;
    args.object = spec;
    args.object_namespace = "team-a";
    args.timeout = timeout;
    args.stop_nodes = stop_nodes;
    std::ostringstream o, e;
    int code = RunRolloutCommand(fleet_args, args, Deps(std::move(fleet)), o, e);
    *out = o.str();
    if (err) *err = e.str();
    return code;
  }
};

std::string Row(const std::string& node, const std::string& rest) { return node + "  " + rest; }

TEST_CASE("objects are spelled as kubectl spells them, and match a resource id by plural and group") {
  auto spec = ParseObjectSpec("widgets.example.com/w1", "team-a");
  REQUIRE(spec.ok());
  CHECK(spec->plural == "widgets");
  CHECK(spec->group == "example.com");
  CHECK(spec->name == "w1");
  std::string version;
  CHECK(MatchesResource(*spec, "widgets.example.com/v1", &version));
  CHECK(version == "v1");
  CHECK_FALSE(MatchesResource(*spec, "widgets.other.io/v1", nullptr));
  auto bare = ParseObjectSpec("widgets/w1", "");
  REQUIRE(bare.ok());
  CHECK(MatchesResource(*bare, "widgets.other.io/v2", &version));
  CHECK(version == "v2");
  auto versioned = ParseObjectSpec("widgets.v1beta1.example.com/w1", "");
  REQUIRE(versioned.ok());
  CHECK(versioned->version == "v1beta1");
  CHECK_FALSE(MatchesResource(*versioned, "widgets.example.com/v1", nullptr));
  for (const char* bad : {"w1", "widgets/", "/w1", "widgets/a/b", "widgets./w1"}) {
    auto refused = ParseObjectSpec(bad, "");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(), Catch::Contains("expected RESOURCE[.GROUP]/NAME"));
  }
}

TEST_CASE("rollout status shows the soaked canary done, the slot holder running, and who waits for what") {
  Board b;
  b.Result(b.order[0], false, 120 * kSecond, "exited 0");
  b.Running(0, b.order[1]);
  b.cluster.nodes[b.order[3]]["nodehook.io/rollout-hold"] = "disk swap";
  std::string out, err;
  REQUIRE(b.Run("rollout-status", &out, &err) == 0);
  std::string header = "widgets.example.com/v1 team-a/w1  state " + b.digest().substr(0, 12) +
                       "  max_nodes=1 canary_nodes=1 soak=60s max_failed_nodes=2 windows=0  nodes=4\n"
                       "in progress: 1 of 4 nodes done\n";
  CHECK(out == header +
                   "NODE    CANARY  PHASE    WAITING FOR / DETAIL                       MESSAGE\n" +
                   Row(b.order[0], "yes     done                                                exited 0\n") +
                   Row(b.order[1], "-       running\n") +
                   Row(b.order[2], "-       waiting  no_free_slot: 1 of 1 slots held\n") +
                   Row(b.order[3], "-       waiting  held: node label nodehook.io/rollout-hold\n"));
  CHECK(b.cluster.patches.empty());  // read-only
  std::string bare;
  REQUIRE(b.Run("rollout-status", &bare, &err, "10s", nullptr, "widgets/w1") == 0);  // group from the Leases
  CHECK(bare == out);
}

TEST_CASE("rollout status shows a node's step and how far it got: draining with the pods left") {
  Board b;
  RolloutLease slot = SlotLease(0, b.order[0], "u1", b.digest(), NodeStep::kDraining, b.now() - kSecond);
  slot.detail = "2 pods left: team-a/web-1, team-a/web-2; blocked: team-a/web-2: \x1b[31mbudget";
  b.cluster.leases.push_back(slot);
  std::string out, err;
  REQUIRE(b.Run("rollout-status", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains(Row(b.order[0], "yes     draining  2 pods left: team-a/web-1, team-a/web-2; "
                                                  "blocked: team-a/web-2: \\x1b[31mbudget")));
  for (NodeStep phase : {NodeStep::kCordoning, NodeStep::kRebooting, NodeStep::kUncordoning}) {
    b.cluster.leases.back() = SlotLease(0, b.order[0], "u1", b.digest(), phase, b.now() - kSecond);
    REQUIRE(b.Run("rollout-status", &out, &err) == 0);
    CHECK_THAT(out, Catch::Contains(Row(b.order[0], std::string("yes     ") + NodeStepName(phase))));
  }
}

TEST_CASE("rollout plan lists the order, canaries in a batch of their own, then batches of max_nodes") {
  Board b;
  b.policy = Policy(2, 1);
  for (auto& l : b.cluster.leases) l.policy_json = PolicyJson(b.policy);
  b.Running(0, b.order[0]);
  std::string out;
  REQUIRE(b.Run("rollout-plan", &out) == 0);
  CHECK_THAT(out, Catch::Contains("ORDER  BATCH  NODE    CANARY  NOW      BLOCKED BY\n"
                                  "1      1      " + b.order[0] + "  yes     running\n"
                                  "2      2      " + b.order[1] + "  -       waiting  canaries_pending: canaries " + b.order[0] + "\n"
                                  "3      2      " + b.order[2] + "  -       waiting  canaries_pending: canaries " + b.order[0] + "\n"
                                  "4      3      " + b.order[3] + "  -       waiting  canaries_pending: canaries " + b.order[0] + "\n"));
}

TEST_CASE("a failed canary halts the state: the header says so and every waiting node is halted") {
  Board b;
  b.Result(b.order[0], true, 5 * kSecond, "exited 3: containerd did not come back");
  std::string out;
  REQUIRE(b.Run("rollout-status", &out) == 0);
  CHECK_THAT(out, Catch::Contains("halted: canary " + b.order[0] + " failed\n"));
  CHECK_THAT(out, Catch::Contains(Row(b.order[0], "yes     failed   ")) &&
                      Catch::Contains("exited 3: containerd did not come back"));
  CHECK_THAT(out, Catch::Contains(Row(b.order[1], "-       waiting  halted: canary " + b.order[0] + " failed")));
}

TEST_CASE("a paused object: the header says paused, and no node may start") {
  Board b;
  b.Annotate(R"({"nodehook.io/rollout-paused":"true"})");
  std::string out;
  REQUIRE(b.Run("rollout-status", &out) == 0);
  CHECK_THAT(out, Catch::Contains("paused (annotation nodehook.io/rollout-paused)\n"));
  CHECK_THAT(out, Catch::Contains(Row(b.order[0], "yes     waiting  paused: annotation nodehook.io/rollout-paused")));
  CHECK_THAT(out, Catch::Contains(Row(b.order[3], "-       waiting  paused: annotation nodehook.io/rollout-paused")));
  CHECK(b.digest() == DigestOf(Widget("team-a", "w1", "u1", "7")));  // steering is not a new state
}

TEST_CASE("pause and resume are merge patches of the object's annotations; resume names the current state") {
  Board b;
  std::string out;
  REQUIRE(b.Run("rollout-pause", &out) == 0);
  REQUIRE(b.Run("rollout-resume", &out) == 0);
  CHECK(out == "widgets.example.com/v1 team-a/w1 resumed at state " + b.digest().substr(0, 12) + "\n");
  REQUIRE(b.cluster.patches.size() == 2);
  CHECK(b.cluster.patches[0].first == "team-a/w1");
  CHECK(b.cluster.patches[0].second == R"({"metadata":{"annotations":{"nodehook.io/rollout-paused":"true"}}})");
  CHECK(b.cluster.patches[1].second == R"({"metadata":{"annotations":{"nodehook.io/rollout-paused":null,"nodehook.io/rollout-resume":")" +
                                           b.digest() + R"("}}})");
}

TEST_CASE("pause --stop-nodes sets the annotation's value that stops the nodes inside too") {
  Board b;
  b.stop_nodes = true;
  std::string out;
  REQUIRE(b.Run("rollout-pause", &out) == 0);
  CHECK(out == "widgets.example.com/v1 team-a/w1 paused; the nodes inside stop before their hook succeeds and give "
               "their cordon back\n");
  CHECK(b.cluster.patches.at(0).second == R"({"metadata":{"annotations":{"nodehook.io/rollout-paused":"stop-nodes"}}})");
}

TEST_CASE("a resumed halted state goes on: the header says resumed and the next node may start") {
  Board b;
  b.Result(b.order[0], true, 5 * kSecond, "exited 3");
  b.Annotate(R"({"nodehook.io/rollout-resume":")" + b.digest() + R"("})");
  std::string out;
  REQUIRE(b.Run("rollout-status", &out) == 0);
  CHECK_THAT(out, Catch::Contains("halted (canary " + b.order[0] + " failed), resumed\n"));
  // The failed canary may never try again (a permanent failure): the resume lets the others past it.
  CHECK_THAT(out, Catch::Contains(Row(b.order[1], "-       waiting  may start now")));
}

TEST_CASE("exit 1 for a resource without rollout Leases or a missing object, 2 for a bad kubeconfig") {
  Board b;
  std::string out, err;
  CHECK(b.Run("rollout-status", &out, &err, "10s", nullptr, "gadgets.example.com/w1") == 1);
  CHECK_THAT(err, Catch::Contains("no rollout Leases for gadgets.example.com: the resource has no rollout policy"));
  CHECK(b.Run("rollout-status", &out, &err, "10s", nullptr, "widgets.example.com/nope") == 1);
  CHECK_THAT(err, Catch::Contains("widgets.example.com/v1 team-a/nope not found"));
  CHECK(b.Run("rollout-status", &out, &err, "10s", nullptr, "nope") == 2);

  RolloutDeps deps = b.Deps(nullptr);
  deps.cluster = [](const FleetCommandArgs&, const std::string&) -> Result<std::unique_ptr<RolloutCluster>> {
    return InvalidError("kubeconfig /nowhere: no such file");
  };
  FleetCommandArgs fleet_args;
  fleet_args.action = "rollout-status";
  RolloutCommandArgs args;
  args.object = "widgets/w1";
  std::ostringstream o, e;
  CHECK(RunRolloutCommand(fleet_args, args, deps, o, e) == 2);
  CHECK_THAT(e.str(), Catch::Contains("kubeconfig /nowhere"));
}

TEST_CASE("wait with a policy exits 0 once every node Lease has the current state done") {
  Board b;
  for (const auto& n : b.order) b.Result(n, false, 0, "ok");
  std::string out;
  CHECK(b.Run("wait", &out) == 0);
  CHECK(out == "every node (4) handled widgets.example.com/v1 team-a/w1 state " + b.digest().substr(0, 12) + "\n");
  CHECK(b.sleeps == 0);
}

TEST_CASE("wait with a policy polls until the last node is done, then exits 0") {
  Board b;
  for (size_t i = 0; i < 3; ++i) b.Result(b.order[i], false, 100 * kSecond, "ok");
  b.on_sleep = [&](int n) {
    if (n == 3) b.Result(b.order[3], false, 0, "ok");
  };
  std::string out;
  CHECK(b.Run("wait", &out, nullptr, "90s") == 0);
  CHECK(b.sleeps == 3);
}

TEST_CASE("wait with a policy times out with exit 4, naming each blocking node and why") {
  Board b;
  b.Result(b.order[0], false, 120 * kSecond, "ok");
  b.Running(0, b.order[1]);
  std::string out;
  CHECK(b.Run("wait", &out, nullptr, "5s") == 4);
  CHECK_THAT(out, Catch::StartsWith("timed out after 5s: 3 of 4 nodes have not handled widgets.example.com/v1 team-a/w1"));
  CHECK_THAT(out, Catch::Contains("  " + b.order[1] + ": running\n"));
  CHECK_THAT(out, Catch::Contains("  " + b.order[2] + ": waiting (no_free_slot: 1 of 1 slots held)\n"));
  CHECK_FALSE(out.find("  " + b.order[0] + ":") != std::string::npos);
  CHECK(b.sleeps == 5);  // every second, up to the deadline
}

TEST_CASE("wait exits 5 when the state halts, naming the failed nodes") {
  Board b;
  b.Result(b.order[0], false, 120 * kSecond, "ok");
  b.Result(b.order[1], true, 10 * kSecond, "exited 2: no space");
  b.Result(b.order[2], true, 10 * kSecond, "exited 2: no space");
  std::string out;
  CHECK(b.Run("wait", &out, nullptr, "1m") == 5);
  CHECK_THAT(out, Catch::StartsWith("the rollout of widgets.example.com/v1 team-a/w1 halted: 2 nodes failed"));
  CHECK_THAT(out, Catch::Contains("  " + b.order[1] + ": failed: exited 2: no space\n"));
  CHECK(b.sleeps == 0);
}

TEST_CASE("durations are read as kubectl users write them") {
  CHECK(ParseWaitDuration("90s").value() == std::chrono::seconds(90));
  CHECK(ParseWaitDuration("5m").value() == std::chrono::minutes(5));
  CHECK(ParseWaitDuration("1h30m").value() == std::chrono::minutes(90));
  CHECK(ParseWaitDuration("45").value() == std::chrono::seconds(45));
  CHECK_FALSE(ParseWaitDuration("5d").ok());
  CHECK_FALSE(ParseWaitDuration("").ok());
  CHECK_FALSE(ParseWaitDuration("m").ok());
}

}  // namespace
TEST_CASE("an entry limited to one namespace has a rollout of its own: an object reads its namespace's") {
  RolloutLease everywhere = NodeLease("node-1", Policy(1, 0));
  RolloutLease team_a = NodeLease("node-1", Policy(2, 0));
  team_a.scope = "team-a";
  team_a.name = NodeLeaseName(RolloutIdOf(ResourceRef{"example.com", "v1", "widgets", "team-a", ""}), "node-1");
  RolloutLease team_b = team_a;
  team_b.scope = "team-b";
  team_b.name = NodeLeaseName(RolloutIdOf(ResourceRef{"example.com", "v1", "widgets", "team-b", ""}), "node-1");
  CHECK(team_a.name != team_b.name);
  CHECK(team_a.name != everywhere.name);
  // Through the Leases' JSON: the scope is written and read back.
  std::vector<RolloutLease> all;
  for (const RolloutLease& l : {everywhere, team_a, team_b}) all.push_back(*ParseRolloutLease(RolloutLeaseJson("nodehook", "rid", l)));
  std::string id;
  auto in_a = ResourceLeases(all, *ParseObjectSpec("widgets.example.com/w1", "team-a"), &id);
  REQUIRE(in_a.ok());
  REQUIRE(in_a->size() == 1);
  CHECK((*in_a)[0].name == team_a.name);
  auto in_c = ResourceLeases(all, *ParseObjectSpec("widgets.example.com/w1", "team-c"), &id);
  REQUIRE(in_c.ok());
  REQUIRE(in_c->size() == 1);
  CHECK((*in_c)[0].name == everywhere.name);  // no entry of its own: the cluster-wide one
}

}  // namespace nodehook
