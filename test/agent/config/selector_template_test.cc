#include <catch2/catch.hpp>

#include "agent/config/selector_template.h"
#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// A config whose one resource has `selectors` (JSON members) on its second line.
std::string WithSelectors(const std::string& selectors) {
  return "{\"state_file\": \"/s.db\", \"resources\": [{\"version\": \"v1\", \"plural\": \"widgets\",\n" + selectors +
         ", \"hooks\": {\"create\": {\"argv\": [\"/h\"]}}}]}";
}

}  // namespace

TEST_CASE("{node} in label and field selectors becomes this node's name, wherever the name comes from") {
  auto result = ParseConfig(WithSelectors(R"x("label_selector": "example.com/node in ({node},all)",
                                              "field_selector": "metadata.name!={node}-x")x"),
                            Sources({{"NODE_NAME", "node-a"}}, {{"node_name", "node-b"}}));
  REQUIRE(result.ok());
  CHECK(result.config.resources[0].ref.label_selector == "example.com/node in (node-b,all)");
  CHECK(result.config.resources[0].ref.field_selector == "metadata.name!=node-b-x");
}

TEST_CASE("a selector without placeholders is passed on as written") {
  auto result = ParseConfig(WithSelectors(R"("label_selector": "app=web,tier!=db")"), Sources({{"NODE_NAME", "n"}}));
  REQUIRE(result.ok());
  CHECK(result.config.resources[0].ref.label_selector == "app=web,tier!=db");
}

TEST_CASE("an unknown placeholder in a selector is an error naming the line, the key and the placeholder") {
  auto result = ParseConfig(WithSelectors(R"("label_selector": "example.com/node={nodename}")"),
                            Sources({{"NODE_NAME", "n"}}));
  const ConfigError* e = FindError(result, "resources[0].label_selector");
  REQUIRE(e != nullptr);
  CHECK(e->line == 2);
  CHECK(e->message.find("unknown placeholder {nodename}") != std::string::npos);
  CHECK(e->message.find("{node}") != std::string::npos);
}

TEST_CASE("an unmatched brace in a field selector is an error") {
  auto result = ParseConfig(WithSelectors(R"("field_selector": "metadata.name={node")"), Sources({{"NODE_NAME", "n"}}));
  const ConfigError* e = FindError(result, "resources[0].field_selector");
  REQUIRE(e != nullptr);
  CHECK(e->message.find("unmatched '{'") != std::string::npos);
}

TEST_CASE("selector templates: every {node} is replaced, text around it kept") {
  CHECK(SelectorTemplateProblem("a={node},b in ({node})").empty());
  CHECK(ExpandSelector("a={node},b in ({node})", "n1") == "a=n1,b in (n1)");
  CHECK(ExpandSelector("", "n1").empty());
  CHECK_FALSE(SelectorTemplateProblem("a=}").empty());
  CHECK_FALSE(UsesNodePlaceholder("a=b"));
}
