#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test/agent/config/config_test_util.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kExample = std::string(NODEHOOK_SOURCE_DIR) + "/config/example.json";

}  // namespace

TEST_CASE("check-config exits 0 and summarises a valid config") {
  TempDir dir;
  std::string file = dir.Write("ok.json", MinimalConfig(R"("api": {"kubeconfig": "/k"})"));
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(file, Sources({{"NODE_NAME", "node-a"}}), out, err) == 0);
  REQUIRE(err.str().empty());
  REQUIRE(out.str() == file + ": valid\n"
                              "node: node-a\n"
                              "state file: /s.db\n"
                              "api: kubeconfig /k\n"
                              "resources:\n"
                              "  widgets/v1 in all namespaces\n"
                              "    create: /h (timeout 60s)\n");
}

TEST_CASE("check-config exits 2 and prints one FILE:LINE: path: message line per problem") {
  TempDir dir;
  std::string file = dir.Write("bad.json", "{\n  \"state_file\": 1,\n  \"resources\": []\n}\n");
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(file, {}, out, err) == 2);
  REQUIRE(out.str().empty());
  REQUIRE(err.str() == file + ":2: state_file: expected a non-empty string, got number\n" +
                           file + ":3: resources: expected a non-empty array of resources to watch, got []\n" +
                           file + ": node_name: not set (expected \"node_name\" in the file, --node-name, or "
                                  "NODE_NAME from the downward API)\n" +
                           file + ": state_file: not set (expected \"state_file\" in the file, --state-file, or "
                                  "NODEHOOK_STATE_FILE)\n");
}

TEST_CASE("check-config exits 2 and names the problem when the API connection it names cannot be loaded") {
  TempDir dir;
  std::string file = dir.Write("ok.json", MinimalConfig(R"("api": {"kubeconfig": "/k"})"));
  std::ostringstream out, err;
  std::string checked;
  auto check = [&](const Config& config) {
    checked = config.api.kubeconfig;
    return InvalidError("kubeconfig /k: line 3, column 5: cluster 'x' key 'server': is not set");
  };
  REQUIRE(RunCheckConfig(file, Sources({{"NODE_NAME", "node-a"}}), out, err, check) == 2);
  CHECK(checked == "/k");
  CHECK(out.str().empty());
  CHECK(err.str() == file + ": api: kubeconfig /k: line 3, column 5: cluster 'x' key 'server': is not set\n" + file +
                         ": to check the file alone, off the node (no hook programs, no credentials): "
                         "nodehook check-config --offline " + file + "\n");
}

TEST_CASE("check-config off the node says how to check the file alone when a hook program is missing") {
  TempDir dir;
  std::string file = dir.Write("ok.json", MinimalConfig(R"("api": {"kubeconfig": "/k"})"));
  ConfigSources sources = Sources({{"NODE_NAME", "node-a"}});
  sources.check_program = [](const std::string& program) { return program + ": no such file"; };
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(file, sources, out, err) == 2);
  CHECK(err.str().find("/h: no such file") != std::string::npos);
  CHECK(err.str().find("nodehook check-config --offline " + file + "\n") != std::string::npos);
  std::ostringstream offline_out, offline_err;
  REQUIRE(RunCheckConfig(file, OfflineSources(sources), offline_out, offline_err) == 0);
  CHECK(offline_err.str().empty());
}

TEST_CASE("check-config --offline checks {node} selectors without NODE_NAME and still reports the file's problems") {
  TempDir dir;
  std::string file = dir.Write("sel.json", R"json({"state_file": "/s.db", "resources": [{"version": "v1", "plural": "w",
    "label_selector": "n in ({node})", "hooks": {"create": {"argv": ["/h"], "timeout_seconds": 0}}}]})json");
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(file, OfflineSources(Sources({})), out, err) == 2);
  CHECK(err.str().find("timeout_seconds: expected an integer from 1 to ") != std::string::npos);
  CHECK(err.str().find("node_name") == std::string::npos);
  CHECK(err.str().find("--offline") == std::string::npos);  // already offline: no hint
}

TEST_CASE("check-config exits 2 when the file cannot be read") {
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig("/nonexistent/config.json", {}, out, err) == 2);
  REQUIRE(err.str().find("/nonexistent/config.json: cannot read the file: ") == 0);
}

TEST_CASE("the shipped example config is valid and watches the demo widgets with every hook") {
  ConfigResult result = LoadConfigFile(kExample, Sources({{"NODE_NAME", "demo-node"}}));
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  REQUIRE(result.config.resources.size() == 1);
  const WatchedResource& widgets = result.config.resources[0];
  REQUIRE(widgets.ref.group == "example.com");
  REQUIRE(widgets.ref.version == "v1");
  REQUIRE(widgets.ref.plural == "widgets");
  REQUIRE(widgets.hooks.size() == 4);
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(kExample, Sources({{"NODE_NAME", "demo-node"}}), out, err) == 0);
  REQUIRE(out.str().find("  widgets.example.com/v1 in all namespaces\n    ignoring: metadata.annotations.note\n") !=
          std::string::npos);
}

TEST_CASE("every hook in the example config is shipped in config/hooks and is executable") {
  ConfigResult result = LoadConfigFile(kExample, Sources({{"NODE_NAME", "demo-node"}}));
  REQUIRE(result.ok());
  for (const auto& [reason, hook] : result.config.resources[0].hooks) {
    std::string program = hook.argv[0];
    std::string shipped = std::string(NODEHOOK_SOURCE_DIR) + "/config/hooks/" + program.substr(program.rfind('/') + 1);
    INFO(reason << " -> " << shipped);
    REQUIRE(access(shipped.c_str(), X_OK) == 0);
  }
}

TEST_CASE("the example widget hook appends reason, node and object to its log") {
  TempDir dir;
  std::string log = dir.path() + "/logs/widgets.log";
  std::string hook = std::string(NODEHOOK_SOURCE_DIR) + "/config/hooks/widget-hook";
  std::string env = "NODEHOOK_NODE=node-a NODEHOOK_NAMESPACE=shop NODEHOOK_NAME=w1 WIDGET_LOG='" + log + "' ";
  std::string quiet = " </dev/null >/dev/null 2>&1";
  REQUIRE(std::system((env + "NODEHOOK_REASON=create '" + hook + "'" + quiet).c_str()) == 0);
  REQUIRE(std::system((env + "NODEHOOK_REASON=delete '" + hook + "'" + quiet).c_str()) == 0);
  REQUIRE(ReadFile(log) == "create node-a shop/w1\ndelete node-a shop/w1\n");
}

TEST_CASE("the example widget hook fails on purpose while the retry count is below WIDGET_FAIL_UNTIL_RETRY") {
  TempDir dir;
  std::string log = dir.path() + "/w.log";
  std::string hook = std::string(NODEHOOK_SOURCE_DIR) + "/config/hooks/widget-hook";
  std::string env = "NODEHOOK_REASON=update NODEHOOK_NODE=n NODEHOOK_NAME=w WIDGET_FAIL_UNTIL_RETRY=1 WIDGET_LOG='" +
                    log + "' ";
  std::string quiet = " </dev/null >/dev/null 2>&1";
  REQUIRE(std::system((env + "NODEHOOK_RETRY=0 '" + hook + "'" + quiet).c_str()) != 0);
  REQUIRE(std::system((env + "NODEHOOK_RETRY=1 '" + hook + "'" + quiet).c_str()) == 0);
  REQUIRE(ReadFile(log) == "update n w\n");
}

TEST_CASE("environment sources hold this process's environment") {
  setenv("NODEHOOK_CONFIG_TEST_VAR", "a=b", 1);
  ConfigSources sources = EnvironmentSources();
  unsetenv("NODEHOOK_CONFIG_TEST_VAR");
  REQUIRE(sources.env.at("NODEHOOK_CONFIG_TEST_VAR") == "a=b");
  REQUIRE(sources.flags.empty());
}
