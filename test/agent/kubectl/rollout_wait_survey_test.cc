// kubectl nodehook wait for a resource without a rollout policy: the agents' own answers
// (GET /v1/objects?uid=UID) decide, through each object's settled_resource_version.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include "agent/app/rollout_command.h"
#include "agent/kubectl/fleet_wait.h"
#include "agent/kubectl/object_wait.h"
#include "test/agent/kubectl/rollout_fakes.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

std::string Listed(const std::string& settled_rv, const std::string& handlers = "") {
  return R"({"resource":"widgets.example.com/v1","namespace":"ns","name":"w1","uid":"u1","handled":true,)"
         R"("handled_at_ms":900,"handled_at_ms_relative":"now",)" +
         (settled_rv.empty() ? std::string() : R"("settled_resource_version":")" + settled_rv + R"(",)") +
         R"("handlers":[)" + handlers + "]}";
}

std::string Answer(const std::string& node, const std::string& object) {
  return R"({"node":")" + node + R"(","snapshot_at_ms":1000,"snapshot_age_ms":0,"messages":"shown","total":)" +
         (object.empty() ? "0" : "1") + R"(,"truncated":false,"objects":[)" + object + "]}";
}

const char* kFailing =
    R"({"handler":"create","outcome":"failed","retries":2,"next_attempt_ms":5000,"next_attempt_ms_relative":"",)"
    R"("first_start_ms":500,"first_start_ms_relative":"","last_message":"exited 1: failing on purpose","target":"t"})";

// Agents whose answers the test changes between looks.
struct Agents {
  std::map<std::string, Result<std::string>> answers;  // by node (pod "nodehook-" + node)
  std::vector<std::string> asked;

  void Set(const std::string& node, Result<std::string> answer) { answers.insert_or_assign(node, std::move(answer)); }

  FleetSourceFactory Factory() {
    return [this](const FleetCommandArgs&) -> Result<std::unique_ptr<FleetSource>> {
      struct Source final : FleetSource {
        Agents* a;
        explicit Source(Agents* agents) : a(agents) {}
        Result<std::vector<AgentPod>> ListAgents() override {
          std::vector<AgentPod> pods;
          for (const auto& [node, answer] : a->answers) pods.push_back(AgentPod{"nodehook-" + node, node, "10.0.0.1", "Running"});
          return pods;
        }
        Result<std::string> Ask(const AgentPod& pod, const std::string& path) override {
          a->asked.push_back(pod.node + path);
          return a->answers.at(pod.node);
        }
      };
      return std::unique_ptr<FleetSource>(std::make_unique<Source>(this));
    };
  }
};

struct Setup : FakeCommandWorld {  // no Leases: no rollout policy
  Agents agents;

  Setup() { cluster.objects["ns/w1"] = Widget("ns", "w1", "u1", "42"); }

  int Run(const std::string& spec, std::string* out, const std::string& timeout = "10s") {
    RolloutDeps deps = Deps(agents.Factory());
    FleetCommandArgs fleet_args;
    fleet_args.action = "wait";
    RolloutCommandArgs args;
    args.object = spec;
    args.object_namespace = "ns";
    args.timeout = timeout;
    std::ostringstream o, e;
    int code = RunRolloutCommand(fleet_args, args, deps, o, e);
    *out = o.str() + e.str();
    return code;
  }
};

TEST_CASE("an agent's answer carries the settled resourceVersion of each object; older agents' answers still parse") {
  auto parsed = ParseObjectsAnswer(Answer("node-a", Listed("42")));
  REQUIRE(parsed.ok());
  CHECK(parsed->objects.at(0).settled_resource_version == "42");
  auto older = ParseObjectsAnswer(Answer("node-a", Listed("")));
  REQUIRE(older.ok());
  CHECK(older->objects.at(0).settled_resource_version.empty());
}

TEST_CASE("wait without a policy exits 0 once every agent settled the object's current resourceVersion") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", Listed("42")));
  s.agents.Set("node-b", Answer("node-b", Listed("41")));
  s.on_sleep = [&](int n) {
    if (n == 2) s.agents.Set("node-b", Answer("node-b", Listed("42")));
  };
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out) == 0);
  CHECK(out == "every node (2) handled resourceVersion 42\n");
  CHECK(s.sleeps == 2);
  CHECK(s.agents.asked.at(0) == "node-a/v1/objects?uid=u1");
  CHECK(s.cluster.gets.at(0).resource.version == "v1");  // the group's preferred version
}

TEST_CASE("wait without a policy times out with exit 4 naming the node whose hook keeps failing") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", Listed("42")));
  s.agents.Set("node-b", Answer("node-b", Listed("", kFailing)));
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out, "3s") == 4);
  CHECK(out == "timed out after 3s: 1 of 2 nodes have not handled resourceVersion 42\n"
               "  node-b: create:failed(2): exited 1: failing on purpose\n");
  CHECK(s.sleeps == 3);
}

TEST_CASE("an agent that does not answer or has not seen the object blocks, by name") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", ""));
  s.agents.Set("node-c", Status(StatusCode::kUnavailable, "HTTP 503: connection refused"));
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out, "1s") == 4);
  CHECK_THAT(out, Catch::Contains("  node-a: has not handled it yet (not listed)\n"));
  CHECK_THAT(out, Catch::Contains("  node-c: did not answer: HTTP 503: connection refused\n"));
}

TEST_CASE("an object deleted while waiting: done once no agent lists it any more") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", Listed("41")));
  s.on_sleep = [&](int n) {
    if (n == 1) s.cluster.objects.clear();
    if (n == 2) s.agents.Set("node-a", Answer("node-a", ""));
  };
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out) == 0);
  CHECK(out == "deleted, and no node lists it any more\n");
  CHECK(s.sleeps == 2);
}

TEST_CASE("an agent's 404 for the uid means it does not list the object: blocking while it lives, done once deleted") {
  Setup s;
  s.agents.Set("node-a", Status(StatusCode::kNotFound, "GET /v1/objects?uid=u1: HTTP 404: node node-a knows no such object"));
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out, "1s") == 4);
  CHECK_THAT(out, Catch::Contains("  node-a: has not handled it yet (not listed)\n"));
  s.cluster.objects.clear();
  s.cluster.objects["ns/w1"] = Widget("ns", "w1", "u1", "42");
  s.on_sleep = [&](int) { s.cluster.objects.clear(); };
  CHECK(s.Run("widgets.example.com/w1", &out, "10s") == 0);
  CHECK(out == "deleted, and no node lists it any more\n");
}

TEST_CASE("without a group, the version comes from what the agents list under that name") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", Listed("42")));
  std::string out;
  CHECK(s.Run("widgets/w1", &out) == 0);
  CHECK(s.agents.asked.at(0) == "node-a/v1/objects?name=w1&namespace=ns");
  CHECK(s.Run("gadgets/w1", &out) == 1);
  CHECK_THAT(out, Catch::Contains("spell RESOURCE.GROUP"));
}

TEST_CASE("with a policy whose Leases hold no result for the state (an ungated reason), the agents' word settles it") {
  Setup s;
  RolloutPolicy policy;
  policy.reasons = {"update"};  // a create is not gated: no node result is written for it
  for (const char* n : {"node-a", "node-b"}) s.cluster.leases.push_back(NodeLease(n, policy));
  s.agents.Set("node-a", Answer("node-a", Listed("42")));
  s.agents.Set("node-b", Answer("node-b", Listed("41")));
  std::string out;
  CHECK(s.Run("widgets.example.com/w1", &out, "2s") == 4);
  CHECK_THAT(out, Catch::Contains("2 of 2 nodes have not handled widgets.example.com/v1 ns/w1"));  // the Leases' view
  CHECK_THAT(out, Catch::Contains("  node-a: waiting (may start now (slot 0))\n"));
  s.agents.Set("node-b", Answer("node-b", Listed("42")));
  CHECK(s.Run("widgets.example.com/w1", &out, "2s") == 0);
  CHECK(out == "every node (2) handled resourceVersion 42\n");
}

TEST_CASE("wait for an object that does not exist exits 1") {
  Setup s;
  s.agents.Set("node-a", Answer("node-a", ""));
  std::string out;
  CHECK(s.Run("widgets.example.com/nope", &out) == 1);
  CHECK_THAT(out, Catch::Contains("widgets.example.com/nope -n ns not found"));
}

TEST_CASE("WaitForObject without agents to ask: a resource without a rollout policy exits 2 and says why") {
  FakeCommandWorld world;
  world.cluster.objects["ns/w1"] = Widget("ns", "w1", "u1", "42");
  Result<ObjectSpec> spec = ParseObjectSpec("widgets.example.com/w1", "ns");
  REQUIRE(spec.ok());
  WaitOptions options{Duration(2000), "2s", Duration(1000), 4, "nodehook"};
  WaitTime time{&world.clock, [&world] { return ToMillis(world.clock.Now()); }, [](Duration) {}};
  std::ostringstream out, err;
  CHECK(WaitForObject(world.cluster, nullptr, *spec, options, time, out, err) == 2);
  CHECK(out.str().empty());
  CHECK(err.str() == "kubectl nodehook: no agents to ask\n");
}

}  // namespace
}  // namespace nodehook
