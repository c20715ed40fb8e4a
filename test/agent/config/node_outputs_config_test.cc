// "node_outputs": the NodeCondition a resource keeps on the agent's own Node.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

std::string Resource(const std::string& plural, const std::string& members) {
  return "{\"version\": \"v1\", \"plural\": \"" + plural + "\", " + members + ", \"hooks\": {\"create\": {\"argv\": [\"/h\"]}}}";
}

std::string WithResources(const std::string& resources) {
  return "{\"state_file\": \"/s\",\n\"resources\": [\n" + resources + "]}";
}

}  // namespace

TEST_CASE("node_outputs condition names the NodeCondition a resource keeps; without it there is none") {
  ConfigResult result = ParseConfig(
      WithResources(Resource("widgets", R"("node_outputs": {"condition": "WidgetsReady"})") + ",\n" +
                    Resource("gadgets", R"("node_outputs": {"condition": "example.com/GadgetsReady"})") + ",\n" +
                    Resource("others", R"("finalizer": true)")),
      kNode);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  CHECK(result.config.resources[0].node_condition == "WidgetsReady");
  CHECK(result.config.resources[1].node_condition == "example.com/GadgetsReady");
  CHECK(result.config.resources[2].node_condition.empty());
}

TEST_CASE("node_outputs refuses the kubelet's conditions, malformed types, unknown keys and a singleton resource") {
  auto errors = [](const std::string& members) {
    ConfigResult result = ParseConfig(WithResources(Resource("widgets", members)), kNode);
    std::vector<std::string> all = ErrorsAt(result, "resources[0].node_outputs.condition");
    for (const std::string& m : ErrorsAt(result, "resources[0].node_outputs")) all.push_back(m);
    return all;
  };
  CHECK(errors(R"("node_outputs": {"condition": "Ready"})") ==
        std::vector<std::string>{"\"Ready\" is the kubelet's own condition; choose another type (e.g. \"widgetsReady\")"});
  CHECK(errors(R"("node_outputs": {"condition": "Widgets Ready"})").size() == 1);
  CHECK(errors(R"("node_outputs": {"condition": "9Lives"})").size() == 1);
  CHECK(errors(R"("node_outputs": {"condition": ""})").size() == 1);
  CHECK(errors(R"("node_outputs": {})") == std::vector<std::string>{"expected at least one of: condition, prefixes"});
  CHECK(errors(R"("node_outputs": "WidgetsReady")").size() == 1);
  ConfigResult unknown =
      ParseConfig(WithResources(Resource("widgets", R"("node_outputs": {"condition": "W", "labels": {}})")), kNode);
  CHECK_FALSE(unknown.ok());
  INFO(AllErrors(unknown));
  CHECK(AllErrors(unknown).find("labels") != std::string::npos);
  ConfigResult singleton = ParseConfig(
      WithResources(Resource("widgets", R"("singleton": true, "node_outputs": {"condition": "WidgetsReady"})")), kNode);
  CHECK(ErrorsAt(singleton, "resources[0].node_outputs") ==
        std::vector<std::string>{"a singleton resource has no per-node outputs"});
}

TEST_CASE("two resources may not keep the same condition: each would overwrite the other's verdict") {
  ConfigResult result = ParseConfig(
      WithResources(Resource("widgets", R"("node_outputs": {"condition": "Ready2"})") + ",\n" +
                    Resource("gadgets", R"("node_outputs": {"condition": "Ready2"})")),
      kNode);
  CHECK(ErrorsAt(result, "resources[1].node_outputs.condition") ==
        std::vector<std::string>{"\"Ready2\" is resources[0]'s condition already"});
}

TEST_CASE("node_outputs prefixes say under which keys the hooks may publish for their node") {
  ConfigResult result = ParseConfig(
      WithResources(Resource("widgets", R"("node_outputs": {"prefixes": ["widgets.example.com/", "example.com/w-"]})")),
      kNode);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  CHECK(result.config.resources[0].node_output_prefixes ==
        std::vector<std::string>{"widgets.example.com/", "example.com/w-"});
  CHECK(result.config.resources[0].node_condition.empty());
}

TEST_CASE("node_outputs refuses prefixes without a domain of one's own, and overlapping ones") {
  auto errors = [](const std::string& prefixes) {
    ConfigResult result =
        ParseConfig(WithResources(Resource("widgets", R"("node_outputs": {"prefixes": )" + prefixes + "}")), kNode);
    std::vector<std::string> all;
    for (const ConfigError& e : result.errors) all.push_back(e.path + ": " + e.message);
    return all;
  };
  CHECK(errors(R"(["widgets"])") ==
        std::vector<std::string>{"resources[0].node_outputs.prefixes[0]: expected a DNS subdomain and \"/\", optionally "
                                 "followed by the start of a name (e.g. \"widgets.example.com/\"), got \"widgets\""});
  CHECK(errors(R"(["node-restriction.kubernetes.io/"])") ==
        std::vector<std::string>{"resources[0].node_outputs.prefixes[0]: \"node-restriction.kubernetes.io\" belongs to "
                                 "Kubernetes itself; use a domain of your own"});
  CHECK(errors(R"(["k8s.io/"])").size() == 1);
  CHECK(errors(R"(["Example.com/"])").size() == 1);
  CHECK(errors(R"(["example.com/-x"])").size() == 1);
  CHECK(errors(R"(["example.com/a b"])").size() == 1);
  CHECK(errors(R"([])").size() == 1);
  CHECK(errors(R"(["example.com/", "example.com/w-"])") ==
        std::vector<std::string>{"resources[0].node_outputs.prefixes[1]: overlaps \"example.com/\" (one starts with the "
                                 "other)"});
  ConfigResult two = ParseConfig(
      WithResources(Resource("widgets", R"("node_outputs": {"prefixes": ["example.com/w"]})") + ",\n" +
                    Resource("gadgets", R"("node_outputs": {"prefixes": ["example.com/g", "example.com/widget-"]})")),
      kNode);
  CHECK(ErrorsAt(two, "resources[1].node_outputs.prefixes[1]") ==
        std::vector<std::string>{"overlaps resources[0]'s prefix \"example.com/w\""});
  CHECK(ErrorsAt(two, "resources[1].node_outputs.prefixes[0]").empty());
}

TEST_CASE("ready_condition names the condition kept on each object of a custom resource") {
  ConfigResult result = ParseConfig(
      WithResources(Resource("widgets", R"("group": "example.com", "ready_condition": "Ready")") + ",\n" +
                    Resource("gadgets", R"("group": "example.com")")),
      kNode);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  CHECK(result.config.resources[0].ready_condition == "Ready");
  CHECK(result.config.resources[1].ready_condition.empty());

  auto errors = [](const std::string& members) {
    return ErrorsAt(ParseConfig(WithResources(Resource("widgets", members)), kNode), "resources[0].ready_condition");
  };
  CHECK(errors(R"("group": "example.com", "ready_condition": "Not Ready")") ==
        std::vector<std::string>{"expected a condition type: letters and digits starting with a letter, optionally "
                                 "behind a DNS subdomain and \"/\" (e.g. \"Ready\"), got \"Not Ready\""});
  CHECK(errors(R"("group": "example.com", "ready_condition": true)").size() == 1);
  CHECK(errors(R"("ready_condition": "Ready")") ==
        std::vector<std::string>{"a condition on each object needs a custom resource (a CRD with a status "
                                 "subresource); widgets is in the core group"});
  CHECK(errors(R"("group": "example.com", "singleton": true, "ready_condition": "Ready")")[0] ==
        "a singleton resource has no per-node results to sum up");
}
