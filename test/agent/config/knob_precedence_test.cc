#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

const std::string kFileTuning = MinimalConfig(R"("node_name": "file-node", "tuning": {"workers": 5, "log_level": "warn"})");

}  // namespace

TEST_CASE("a knob set nowhere keeps its default") {
  Config c = MustParse(MinimalConfig(), Sources({{"NODE_NAME", "n"}}));
  REQUIRE(c.tuning.workers == 4);
  REQUIRE(c.tuning.log_level == "info");
}

TEST_CASE("the file beats the default") {
  Config c = MustParse(kFileTuning, {});
  REQUIRE(c.tuning.workers == 5);
  REQUIRE(c.tuning.log_level == "warn");
  REQUIRE(c.node_name == "file-node");
}

TEST_CASE("the environment beats the file") {
  Config c = MustParse(kFileTuning,
                       Sources({{"NODEHOOK_WORKERS", "6"}, {"NODEHOOK_LOG_LEVEL", "error"}, {"NODE_NAME", "env-node"}}));
  REQUIRE(c.tuning.workers == 6);
  REQUIRE(c.tuning.log_level == "error");
  REQUIRE(c.node_name == "env-node");
}

TEST_CASE("a flag beats the environment") {
  Config c = MustParse(kFileTuning, Sources({{"NODEHOOK_WORKERS", "6"}, {"NODEHOOK_LOG_LEVEL", "error"}, {"NODE_NAME", "env-node"}},
                                            {{"workers", "7"}, {"log_level", "debug"}, {"node_name", "flag-node"}}));
  REQUIRE(c.tuning.workers == 7);
  REQUIRE(c.tuning.log_level == "debug");
  REQUIRE(c.node_name == "flag-node");
}

TEST_CASE("an empty environment variable counts as unset") {
  Config c = MustParse(kFileTuning, Sources({{"NODEHOOK_WORKERS", ""}}));
  REQUIRE(c.tuning.workers == 5);
}

TEST_CASE("every knob can be set from the environment") {
  Config c = MustParse(R"({"resources": [{"version": "v1", "plural": "w", "hooks": {"create": {"argv": ["/h"]}}}]})",
                       Sources({{"NODE_NAME", "n1"},
                                {"NODEHOOK_STATE_FILE", "/env.db"},
                                {"KUBECONFIG", "/env.kubeconfig"},
                                {"NODEHOOK_LOG_LEVEL", "warn"},
                                {"NODEHOOK_WORKERS", "9"},
                                {"NODEHOOK_WATCH_TIMEOUT_SECONDS", "99"},
                                {"NODEHOOK_RETRY_BASE_SECONDS", "3"},
                                {"NODEHOOK_RETRY_MAX_SECONDS", "33"},
                                {"NODEHOOK_HOOK_WORK_DIR", "/work"}}));
  REQUIRE(c.node_name == "n1");
  REQUIRE(c.state_file == "/env.db");
  REQUIRE(c.api.kubeconfig == "/env.kubeconfig");
  REQUIRE_FALSE(c.api.in_cluster);
  REQUIRE(CoreTuning(c.tuning) == "log_level warn, workers 9, watch_timeout_seconds 99, retry_base_seconds 3, "
                                  "retry_max_seconds 33, hook_work_dir \"/work\"");
}

TEST_CASE("every knob can be set by a flag named after it") {
  ConfigSources sources;
  for (const KnobInfo& knob : Knobs()) {
    // Knobs with a fixed set of values get one of them; the rest a number that fits all.
    const std::map<std::string, std::string> special = {
        {"log_level", "error"}, {"log_format", "json"}, {"retry_max_seconds", "50"}, {"after_state_recovery", "rerun"},
        {"cross_node_writes", "steward"},
        {"allow_volatile_state", "true"}, {"skip_hook_checks", "true"},
        {"health_address", ":40"}, {"admin_address", "127.0.0.1:40"}, {"max_object_bytes", "4096"},
        {"objects_endpoint", "no_messages"}, {"list_strategy", "streaming"}};
    sources.flags[knob.name] = special.count(knob.name) ? special.at(knob.name) : "40";
  }
  sources.flags["node_name"] = "flag-node";
  Config c = MustParse(R"({"resources": [{"version": "v1", "plural": "w", "hooks": {"create": {"argv": ["/h"]}}}]})",
                       sources);
  REQUIRE(c.node_name == "flag-node");
  REQUIRE(c.state_file == "40");
  REQUIRE(c.api.kubeconfig == "40");
  REQUIRE(CoreTuning(c.tuning) == "log_level error, workers 40, watch_timeout_seconds 40, retry_base_seconds 40, "
                                  "retry_max_seconds 50, hook_work_dir \"40\"");
  REQUIRE(c.tuning.log_format == "json");
  REQUIRE(c.tuning.objects_endpoint == "no_messages");
  REQUIRE(c.tuning.list_strategy == "streaming");
  REQUIRE(c.allow_volatile_state);
  REQUIRE(c.skip_hook_checks);
}

TEST_CASE("a kubeconfig from the environment overrides in_cluster in the file") {
  Config c = MustParse(MinimalConfig(R"("api": {"in_cluster": true})"),
                       Sources({{"NODE_NAME", "n"}, {"KUBECONFIG", "/home/me/.kube/config"}}));
  REQUIRE_FALSE(c.api.in_cluster);
  REQUIRE(c.api.kubeconfig == "/home/me/.kube/config");
}

TEST_CASE("overridden values are checked like file values and name their source") {
  ConfigResult result = ParseConfig(MinimalConfig(), Sources({{"NODE_NAME", "n"}, {"NODEHOOK_WORKERS", "abc"}},
                                                             {{"watch_timeout_seconds", "0"}, {"log_level", "loud"}}));
  const ConfigError* env = FindError(result, "env NODEHOOK_WORKERS");
  REQUIRE(env != nullptr);
  REQUIRE(env->line == 0);
  REQUIRE(env->ToString("c.json") == "c.json: env NODEHOOK_WORKERS: expected an integer from 1 to 256, got \"abc\"");
  const ConfigError* flag = FindError(result, "flag --watch-timeout-seconds");
  REQUIRE(flag != nullptr);
  REQUIRE(flag->message == "expected an integer from 1 to 86400, got 0");
  REQUIRE(FindError(result, "flag --log-level") != nullptr);
  REQUIRE(result.config.tuning.workers == 4);  // a refused value leaves the previous one
}

TEST_CASE("an integer with trailing junk is refused") {
  ErrorAt(MinimalConfig(), "env NODEHOOK_WORKERS", Sources({{"NODE_NAME", "n"}, {"NODEHOOK_WORKERS", "3x"}}));
}

TEST_CASE("retry_base_seconds above retry_max_seconds is refused where retry_max was set") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("tuning": {"retry_base_seconds": 10,
      "retry_max_seconds": 5})"), "tuning.retry_max_seconds");
  REQUIRE(e.line == 3);
  REQUIRE(e.message == "retry_max_seconds (5) must be >= retry_base_seconds (10)");
}

TEST_CASE("the knob table names each knob's flag, environment variable and default") {
  const KnobInfo* workers = nullptr;
  const KnobInfo* node = nullptr;
  for (const KnobInfo& k : Knobs()) {
    if (k.name == "workers") workers = &k;
    if (k.name == "node_name") node = &k;
  }
  REQUIRE(workers != nullptr);
  REQUIRE(workers->file_key == "tuning.workers");
  REQUIRE(workers->flag == "--workers");
  REQUIRE(workers->env == "NODEHOOK_WORKERS");
  REQUIRE(workers->default_value == "4");
  REQUIRE(node != nullptr);
  REQUIRE(node->env == "NODE_NAME");
  // Flags and environment variables must never collide, or one would silently set two knobs.
  std::set<std::string> flags, envs;
  for (const KnobInfo& k : Knobs()) {
    INFO(k.name);
    REQUIRE(flags.insert(k.flag).second);
    if (!k.env.empty()) REQUIRE(envs.insert(k.env).second);
  }
}

TEST_CASE("an unknown tuning key lists the knobs allowed there") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("tuning": {"wokers": 2})"), "tuning.wokers");
  // Every tuning knob is offered, in table order, and nothing else.
  std::string expected;
  for (const KnobInfo& k : Knobs()) {
    if (k.file_key.rfind("tuning.", 0) != 0) continue;
    expected += (expected.empty() ? "" : ", ") + k.file_key.substr(7);
  }
  REQUIRE(e.message == "unknown key (expected one of: " + expected + ")");
  REQUIRE(e.message.find("log_level, ") != std::string::npos);
}
