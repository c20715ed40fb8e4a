// The per-resource options of issue 4: node_selector_path, finalizer, success_events.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// One resource whose members are `members` followed by a create hook.
// Line numbers in the tests below count from this text: the resource starts on line 3.
std::string ConfigWithResource(const std::string& members) {
  return OneResource(members + ",\n\"hooks\": {\"create\": {\"argv\": [\"/h\"]}}");
}

}  // namespace

TEST_CASE("node_selector_path, finalizer and success_events are read per resource") {
  const Config c = MustParse(
      ConfigWithResource(R"("node_selector_path": "spec.nodeSelector", "finalizer": true, "success_events": true)"));
  const WatchedResource& r = c.resources.at(0);
  CHECK(r.node_selector_path == "spec.nodeSelector");
  CHECK(r.finalizer);
  CHECK(r.success_events);
}

TEST_CASE("without the new keys a resource targets every node, has no finalizer and posts no success events") {
  const WatchedResource r = MustParse(MinimalConfig()).resources.at(0);
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

  const ConfigError empty =
      ErrorAt(ConfigWithResource(R"("node_selector_path": "")"), "resources[0].node_selector_path");
  CHECK(empty.message == "expected a non-empty string, got \"\"");
}

TEST_CASE("finalizer and success_events must be booleans") {
  const std::string config = ConfigWithResource("\"finalizer\": \"yes\",\n\"success_events\": 1");
  const ConfigError finalizer = ErrorAt(config, "resources[0].finalizer");
  CHECK(finalizer.ToString("c.json") ==
        "c.json:4: resources[0].finalizer: expected true or false, got string");
  const ConfigError events = ErrorAt(config, "resources[0].success_events");
  CHECK(events.line == 5);
  CHECK(events.message == "expected true or false, got number");
}

TEST_CASE("a misspelt resource key lists the new keys among those allowed") {
  const ConfigError e = ErrorAt(ConfigWithResource(R"("finaliser": true)"), "resources[0].finaliser");
  CHECK(e.message ==
        "unknown key (expected one of: group, version, plural, namespace, label_selector, field_selector, ignored_paths, "
        "node_selector_path, finalizer, success_events, singleton, hooks, rollout, node_outputs, ready_condition)");
}
