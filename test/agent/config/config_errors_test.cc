#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// Line numbers below refer to this text; keep them in step when editing it.
const char* const kTypoConfig = R"({
  "state_file": "/s.db",
  "resources": [
    {
      "version": "v1",
      "plural": 5,
      "hooks": {
        "create": {"argv": ["/h"]},
        "craete": {"argv": ["/h"]}
      }
    }
  ]
})";

}  // namespace

TEST_CASE("an unknown key is reported with its path, its line and the keys allowed there") {
  ConfigResult result = ParseConfig(kTypoConfig, kNode);
  const ConfigError* e = FindError(result, "resources[0].hooks.craete");
  REQUIRE(e != nullptr);
  REQUIRE(e->line == 9);
  REQUIRE(e->ToString("config.json") ==
          "config.json:9: resources[0].hooks.craete: unknown key (expected one of: create, update, delete, resume, event, check, snapshot)");
}

TEST_CASE("a value of the wrong type is reported with its line and what was expected") {
  ConfigResult result = ParseConfig(kTypoConfig, kNode);
  const ConfigError* e = FindError(result, "resources[0].plural");
  REQUIRE(e != nullptr);
  REQUIRE(e->ToString("config.json") == "config.json:6: resources[0].plural: expected a non-empty string, got number");
}

TEST_CASE("a syntax error is reported with its line and column") {
  ConfigResult result = ParseConfig("{\n  \"state_file\": \"/s.db\"\n  \"resources\": []\n}", kNode);
  REQUIRE(result.errors.size() == 1);
  REQUIRE(result.errors[0].path.empty());
  REQUIRE(result.errors[0].line == 3);
  REQUIRE(result.errors[0].message.find("syntax error at column 3: Missing a comma") == 0);
  REQUIRE(result.errors[0].ToString("c.json").find("c.json:3: syntax error") == 0);
}

TEST_CASE("an empty file is a syntax error, not a crash") {
  ConfigResult result = ParseConfig("", kNode);
  REQUIRE(result.errors.size() == 1);
  REQUIRE(result.errors[0].message.find("syntax error") == 0);
}

TEST_CASE("missing required settings say where each can come from") {
  ConfigResult result = ParseConfig("{}", {});
  const ConfigError* node = FindError(result, "node_name");
  REQUIRE(node != nullptr);
  REQUIRE(node->ToString("c.json") ==
          "c.json: node_name: not set (expected \"node_name\" in the file, --node-name, or NODE_NAME from the "
          "downward API)");
  const ConfigError* state = FindError(result, "state_file");
  REQUIRE(state != nullptr);
  REQUIRE(state->message == "not set (expected \"state_file\" in the file, --state-file, or NODEHOOK_STATE_FILE)");
  const ConfigError* resources = FindError(result, "resources");
  REQUIRE(resources != nullptr);
  REQUIRE(resources->message == "missing (expected a non-empty array of resources to watch)");
}

TEST_CASE("a resource missing required keys points at the resource's line") {
  ConfigResult result = ParseConfig("{\"state_file\": \"/s\",\n\"resources\": [\n{\"group\": \"g\"}]}", kNode);
  const ConfigError* plural = FindError(result, "resources[0].plural");
  REQUIRE(plural != nullptr);
  REQUIRE(plural->line == 3);
  REQUIRE(plural->message == "missing (expected a non-empty string, e.g. \"widgets\")");
  REQUIRE(FindError(result, "resources[0].version") != nullptr);
  REQUIRE(FindError(result, "resources[0].hooks") != nullptr);
}

TEST_CASE("every problem in the file and the environment is reported, not just the first") {
  const char* text = R"({
    "state_file": 7,
    "colour": "blue",
    "resources": [{"version": "v1", "plural": "w", "hooks": {"create": {"argv": []}}},
                  {"version": "v1", "plural": "w", "hooks": {"create": {"argv": ["/h", ""], "timeout_seconds": 0}}}],
    "tuning": {"workers": 0, "log_level": "loud"}
  })";
  ConfigResult result = ParseConfig(text, Sources({{"NODE_NAME", "n"}, {"NODEHOOK_RETRY_MAX_SECONDS", "soon"}}));
  INFO(AllErrors(result));
  std::vector<std::string> expected_paths = {
      "state_file", "colour", "resources[0].hooks.create.argv", "resources[1].hooks.create.argv[1]",
      "resources[1].hooks.create.timeout_seconds", "resources[1]", "tuning.workers", "tuning.log_level",
      "env NODEHOOK_RETRY_MAX_SECONDS"};
  for (const std::string& path : expected_paths) {
    INFO(path);
    REQUIRE(FindError(result, path) != nullptr);
  }
  REQUIRE(FindError(result, "state_file")->message == "expected a non-empty string, got number");
  REQUIRE(FindError(result, "resources[1]")->message.find("duplicates resources[0]") == 0);
  REQUIRE(FindError(result, "tuning.workers")->line == 6);
  REQUIRE(FindError(result, "tuning.log_level")->message == "expected one of: debug, info, warn, error, got \"loud\"");
}

TEST_CASE("entries of one resource watch different namespaces: never one object twice, one snapshot hook") {
  auto parse = [](const std::string& first, const std::string& second) {
    return ParseConfig(R"({"state_file": "/s.db", "api": {"in_cluster": true}, "resources": [
      {"group": "example.com", "version": "v1", "plural": "widgets", )" + first + R"(},
      {"group": "example.com", "version": "v1", "plural": "widgets", )" + second + R"(}]})", kNode);
  };
  const std::string create = R"("hooks": {"create": {"argv": ["/h"]}})";
  const std::string snapshot = R"("hooks": {"snapshot": {"argv": ["/h"]}})";
  ConfigResult apart = parse(R"("namespace": "a", )" + create, R"("namespace": "b", )" + snapshot);
  INFO(AllErrors(apart));
  REQUIRE(apart.ok());

  ConfigResult overlapping = parse(create, R"("namespace": "b", )" + create);
  const ConfigError* overlap = FindError(overlapping, "resources[1]");
  REQUIRE(overlap != nullptr);
  CHECK(overlap->message ==
        "overlaps resources[0]: both would watch the widgets.example.com objects in namespace \"b\"; give each "
        "entry a namespace of its own");
  CHECK(FindError(parse(R"("namespace": "a", )" + create, create), "resources[1]") != nullptr);
  // Another version of the resource serves the same objects.
  auto versions = [](const std::string& ns1, const std::string& ns2) {
    return ParseConfig(R"({"state_file": "/s.db", "api": {"in_cluster": true}, "resources": [
      {"group": "example.com", "version": "v1", "plural": "widgets", "namespace": ")" + ns1 + R"(",
       "hooks": {"create": {"argv": ["/h"]}}},
      {"group": "example.com", "version": "v1beta1", "plural": "widgets", "namespace": ")" + ns2 + R"(",
       "hooks": {"create": {"argv": ["/h"]}}}]})", kNode);
  };
  ConfigResult same_namespace = versions("a", "a");
  const ConfigError* two_versions = FindError(same_namespace, "resources[1]");
  REQUIRE(two_versions != nullptr);
  CHECK(two_versions->message ==
        "overlaps resources[0]: both would watch the widgets.example.com objects in namespace \"a\" (versions v1 and "
        "v1beta1); give each entry a namespace of its own");
  ConfigResult everywhere = versions("", "");
  REQUIRE(FindError(everywhere, "resources[1]") != nullptr);
  CHECK(FindError(everywhere, "resources[1]")->message.find("objects in every namespace (versions") != std::string::npos);
  ConfigResult apart_versions = versions("a", "b");
  INFO(AllErrors(apart_versions));
  CHECK(apart_versions.ok());

  ConfigResult two_snapshots = parse(R"("namespace": "a", )" + snapshot, R"("namespace": "b", )" + snapshot);
  const ConfigError* snapshots = FindError(two_snapshots, "resources[1]");
  REQUIRE(snapshots != nullptr);
  CHECK(snapshots->message.find("has a snapshot hook, as resources[0] of widgets.example.com/v1 does") == 0);

  const std::string outputs = R"("node_outputs": {"prefixes": ["example.com/)";
  ConfigResult two_outputs = parse(R"("namespace": "a", )" + create + ", " + outputs + R"(a-"]})",
                                   R"("namespace": "b", )" + create + ", " + outputs + R"(b-"]})");
  const ConfigError* managers = FindError(two_outputs, "resources[1]");
  REQUIRE(managers != nullptr);
  CHECK(managers->message.find("has node_outputs, as resources[0] of widgets.example.com/v1 does") == 0);
}

TEST_CASE("a key given twice in one object is an error at the second one") {
  ConfigResult result = ParseConfig("{\"state_file\": \"/a\",\n\"state_file\": \"/b\"}", kNode);
  const ConfigError* e = FindError(result, "state_file");
  REQUIRE(e != nullptr);
  REQUIRE(e->line == 2);
  REQUIRE(e->message.find("duplicate key") == 0);
}

TEST_CASE("ignored paths must be dotted paths") {
  ConfigResult result = ParseConfig(
      R"({"state_file": "/s", "resources": [{"version": "v1", "plural": "w", "ignored_paths": ["a..b", "ok.path"],
          "hooks": {"create": {"argv": ["/h"]}}}]})",
      kNode);
  REQUIRE(result.errors.size() == 1);
  REQUIRE(result.errors[0].path == "resources[0].ignored_paths[0]");
}

TEST_CASE("hooks must name at least one reason") {
  ConfigResult result =
      ParseConfig(R"({"state_file": "/s", "resources": [{"version": "v1", "plural": "w", "hooks": {}}]})", kNode);
  const ConfigError* e = FindError(result, "resources[0].hooks");
  REQUIRE(e != nullptr);
  REQUIRE(e->message == "expected at least one of: create, update, delete, resume, event, check, snapshot");
}

TEST_CASE("hooks with only a misspelt reason also say that no hook is configured") {
  ConfigResult result = ParseConfig(
      R"({"state_file": "/s", "resources": [{"version": "v1", "plural": "w", "hooks": {"craete": {"argv": ["/h"]}}}]})",
      kNode);
  REQUIRE(FindError(result, "resources[0].hooks.craete") != nullptr);
  REQUIRE(FindError(result, "resources[0].hooks") != nullptr);
}

TEST_CASE("a top level that is not an object is refused") {
  ConfigResult result = ParseConfig("[1, 2]", kNode);
  const ConfigError* e = FindError(result, "");
  REQUIRE(e != nullptr);
  REQUIRE(e->message == "expected a JSON object at the top level, got array");
}

TEST_CASE("a fraction where an integer knob is expected is refused") {
  ConfigResult result = ParseConfig(MinimalConfig(R"("tuning": {"workers": 1.5})"), kNode);
  const ConfigError* e = FindError(result, "tuning.workers");
  REQUIRE(e != nullptr);
  REQUIRE(e->message == "expected an integer from 1 to 256, got 1.5");
}
