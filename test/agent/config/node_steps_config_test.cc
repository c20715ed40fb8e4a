// A rollout's node steps (issue 28): "cordon", "drain", "reboot", "on_failure", their defaults,
// and each error with its key and line.
#include <catch2/catch.hpp>

#include "agent/config/node_steps_parser.h"
#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// The resource has an update hook; its rollout's `members` start on line 6 ("rollout" is on line 5).
const char* const kUpdate = R"("update": {"argv": ["/h"]})";

RolloutPolicy Parsed(const std::string& members) { return ParsedRollout("{\n" + members + "\n}", kUpdate); }

ConfigError OnlyError(const std::string& members) { return RolloutError(members, kUpdate); }

TEST_CASE("without node steps a rollout cordons nothing") {
  RolloutPolicy p = Parsed("\"max_nodes\": 1");
  REQUIRE_FALSE(p.HasNodeSteps());
  REQUIRE(p.on_failure == OnFailure::kKeepCordoned);
}

TEST_CASE("a drain implies the cordon, and takes its defaults from true") {
  RolloutPolicy p = Parsed("\"drain\": true");
  REQUIRE(p.Cordons());
  REQUIRE(p.drain->timeout == std::chrono::seconds(600));
  REQUIRE(p.drain->grace_period_seconds == -1);
  REQUIRE_FALSE(p.drain->force);
  REQUIRE_FALSE(p.drain->delete_emptydir_data);
  RolloutPolicy kubectl_like = Parsed("\"drain\": {\"force\": true, \"delete_emptydir_data\": true}");
  REQUIRE(kubectl_like.drain->force);
  REQUIRE(kubectl_like.drain->delete_emptydir_data);
  RolloutPolicy full = Parsed(
      "\"drain\": {\"timeout_seconds\": 300, \"pod_selector\": \"app in (web, api),!canary\", "
      "\"grace_period_seconds\": 30},\n\"reboot\": {\"argv\": [\"/usr/bin/nsenter\", \"-t\", \"1\", \"--\", "
      "\"reboot\"], \"timeout_seconds\": 600},\n\"on_failure\": \"uncordon\"");
  REQUIRE(full.drain->timeout == std::chrono::seconds(300));
  REQUIRE(full.drain->pod_selector == "app in (web, api),!canary");
  REQUIRE(full.drain->grace_period_seconds == 30);
  REQUIRE(full.reboot->argv.at(0) == "/usr/bin/nsenter");
  REQUIRE(full.reboot->timeout == std::chrono::seconds(600));
  REQUIRE(full.on_failure == OnFailure::kUncordon);
  REQUIRE(Parsed("\"cordon\": true").Cordons());
  REQUIRE_FALSE(Parsed("\"drain\": false").Cordons());
}

TEST_CASE("node step errors name the key, the line and what was expected") {
  ConfigError e = OnlyError("\"max_nodes\": 1,\n\"drain\": {\"timeout_seconds\": 0}");
  CHECK(e.path == "resources[0].rollout.drain.timeout_seconds");
  CHECK(e.line == 7);
  e = OnlyError("\"drain\": {\"pod_selector\": \"app=web=x\"}");
  CHECK(e.path == "resources[0].rollout.drain.pod_selector");
  e = OnlyError("\"drain\": {\"pod_selector\": \"app=(web\"}");
  CHECK(e.message.find("expected a label selector") == 0);
  e = OnlyError("\"drain\": {\"wait\": 1}");
  CHECK(e.path == "resources[0].rollout.drain.wait");
  e = OnlyError("\"drain\": 5");
  CHECK(e.message == "expected true or an object {\"timeout_seconds\": ..., \"pod_selector\": ..., "
                     "\"grace_period_seconds\": ..., \"force\": ..., \"delete_emptydir_data\": ...}, got number");
  e = OnlyError("\"max_nodes\": 1,\n\"drain\": {\"grace_period_seconds\": 0}");
  CHECK(e.path == "resources[0].rollout.drain.grace_period_seconds");
  CHECK(e.line == 7);
  CHECK(e.message.find("expected 1 to 86400 seconds, got 0: 0 deletes each pod at once") == 0);
  e = OnlyError("\"drain\": {\"force\": \"yes\"}");
  CHECK(e.path == "resources[0].rollout.drain.force");
  CHECK(e.message == "expected true or false, got string");
  e = OnlyError("\"drain\": {\"delete_emptydir_data\": 1}");
  CHECK(e.path == "resources[0].rollout.drain.delete_emptydir_data");
  e = OnlyError("\"cordon\": \"yes\"");
  CHECK(e.message == "expected true or false, got string");
  e = OnlyError("\"reboot\": {\"timeout_seconds\": 60}");
  CHECK(e.path == "resources[0].rollout.reboot.argv");
  CHECK(e.message.find("missing (expected the command that reboots the node") == 0);
  e = OnlyError("\"reboot\": {\"argv\": [\"reboot\"]}");
  CHECK(e.path == "resources[0].rollout.reboot.argv[0]");
  CHECK(e.message == "expected an absolute path to the program, got \"reboot\"");
  e = OnlyError("\"cordon\": true, \"on_failure\": \"retry\"");
  CHECK(e.message == "expected one of: keep_cordoned, uncordon, got \"retry\"");
  e = OnlyError("\"on_failure\": \"uncordon\"");
  CHECK(e.message.find("the rollout neither cordons nor drains") != std::string::npos);
}

TEST_CASE("label selectors are read as kubectl takes them") {
  for (const char* good : {"app=web", "app==web", "app!=web", "!canary", "canary", "tier in (a,b)",
                           "tier notin (a, b),app=web", "example.com/role=db", "app="}) {
    INFO(good);
    CHECK(LabelSelectorProblem(good).empty());
  }
  for (const char* bad : {"app=web=x", "=web", "app in a,b", "app in (a,(b))", "app=web,,", "a b"}) {
    INFO(bad);
    CHECK_FALSE(LabelSelectorProblem(bad).empty());
  }
}

}  // namespace
