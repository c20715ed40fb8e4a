// The per-resource options of issue 4: node_selector_path, finalizer, success_events.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

const ConfigSources kNode = Sources({{"NODE_NAME", "n"}});

// One resource whose members are `members` followed by a create hook.
// Line numbers in the tests below count from this text: the resource starts on line 3.
std::string ConfigWithResource(const std::string& members) {
  return "{\"state_file\": \"/s\",\n\"resources\": [\n{\"version\": \"v1\", \"plural\": \"w\",\n" + members +
         ",\n\"hooks\": {\"create\": {\"argv\": [\"/h\"]}}}]}";
}

}  // namespace

TEST_CASE("node_selector_path, finalizer and success_events are read per resource") {
  ConfigResult result = ParseConfig(
      ConfigWithResource(R"("node_selector_path": "spec.nodeSelector", "finalizer": true, "success_events": true)"),
      kNode);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  const WatchedResource& r = result.config.resources.at(0);
  CHECK(r.node_selector_path == "spec.nodeSelector");
  CHECK(r.finalizer);
  CHECK(r.success_events);
}

TEST_CASE("without the new keys a resource targets every node, has no finalizer and posts no success events") {
  ConfigResult result = ParseConfig(MinimalConfig(), kNode);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  const WatchedResource& r = result.config.resources.at(0);
  CHECK(r.node_selector_path.empty());
  CHECK_FALSE(r.finalizer);
  CHECK_FALSE(r.success_events);
}

TEST_CASE("node_selector_path must be a dotted path, reported at its line") {
  ConfigResult result = ParseConfig(ConfigWithResource(R"("node_selector_path": "spec..nodeSelector")"), kNode);
  const ConfigError* e = FindError(result, "resources[0].node_selector_path");
  REQUIRE(e != nullptr);
  CHECK(e->line == 4);
  CHECK(e->message == "expected a dotted path like \"spec.nodeSelector\", got \"spec..nodeSelector\"");
  CHECK(result.config.resources.at(0).node_selector_path.empty());

  ConfigResult empty = ParseConfig(ConfigWithResource(R"("node_selector_path": "")"), kNode);
  const ConfigError* e2 = FindError(empty, "resources[0].node_selector_path");
  REQUIRE(e2 != nullptr);
  CHECK(e2->message == "expected a non-empty string, got \"\"");
}

TEST_CASE("finalizer and success_events must be booleans") {
  ConfigResult result = ParseConfig(ConfigWithResource("\"finalizer\": \"yes\",\n\"success_events\": 1"), kNode);
  const ConfigError* finalizer = FindError(result, "resources[0].finalizer");
  REQUIRE(finalizer != nullptr);
  CHECK(finalizer->ToString("c.json") == "c.json:4: resources[0].finalizer: expected true or false, got string");
  const ConfigError* events = FindError(result, "resources[0].success_events");
  REQUIRE(events != nullptr);
  CHECK(events->line == 5);
  CHECK(events->message == "expected true or false, got number");
}

TEST_CASE("a misspelt resource key lists the new keys among those allowed") {
  ConfigResult result = ParseConfig(ConfigWithResource(R"("finaliser": true)"), kNode);
  const ConfigError* e = FindError(result, "resources[0].finaliser");
  REQUIRE(e != nullptr);
  CHECK(e->message ==
        "unknown key (expected one of: group, version, plural, namespace, label_selector, field_selector, ignored_paths, "
        "node_selector_path, finalizer, success_events, singleton, hooks, rollout, node_outputs, ready_condition)");
}
