#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

const char* const kFullConfig = R"({
  "node_name": "node-a",
  "state_file": "/var/lib/nodehook/state.db",
  "api": {"kubeconfig": "/etc/kube/config"},
  "resources": [
    {
      "group": "example.com", "version": "v1", "plural": "widgets",
      "namespace": "shop", "label_selector": "tier=web",
      "ignored_paths": ["metadata.annotations.note", "status"],
      "hooks": {
        "create": {"argv": ["/hooks/x", "arg"], "timeout_seconds": 30},
        "delete": {"argv": ["/hooks/del"]}
      }
    },
    {"group": "", "version": "v1", "plural": "configmaps", "hooks": {"update": {"argv": ["/hooks/cm"]}}}
  ],
  "tuning": {"log_level": "debug", "workers": 8, "watch_timeout_seconds": 120,
             "retry_base_seconds": 2, "retry_max_seconds": 60, "hook_work_dir": "/var/lib/nodehook/work"}
})";

}  // namespace

TEST_CASE("a full config fills every field") {
  const Config c = MustParse(kFullConfig, {});
  REQUIRE(c.node_name == "node-a");
  REQUIRE(c.state_file == "/var/lib/nodehook/state.db");
  REQUIRE_FALSE(c.api.in_cluster);
  REQUIRE(c.api.kubeconfig == "/etc/kube/config");

  REQUIRE(c.resources.size() == 2);
  const WatchedResource& widgets = c.resources[0];
  REQUIRE(widgets.ref.group == "example.com");
  REQUIRE(widgets.ref.version == "v1");
  REQUIRE(widgets.ref.plural == "widgets");
  REQUIRE(widgets.ref.namespace_name == "shop");
  REQUIRE(widgets.ref.label_selector == "tier=web");
  REQUIRE(widgets.ignored_paths == std::vector<std::string>{"metadata.annotations.note", "status"});
  REQUIRE(widgets.hooks.size() == 2);
  REQUIRE(widgets.hooks.at("create").argv == std::vector<std::string>{"/hooks/x", "arg"});
  REQUIRE(widgets.hooks.at("create").timeout == std::chrono::seconds(30));
  REQUIRE(widgets.hooks.at("delete").timeout == std::chrono::seconds(60));
  REQUIRE(c.resources[1].ref.group.empty());
  REQUIRE(c.resources[1].hooks.count("update") == 1);

  REQUIRE(CoreTuning(c.tuning) == "log_level debug, workers 8, watch_timeout_seconds 120, retry_base_seconds 2, "
                                  "retry_max_seconds 60, hook_work_dir \"/var/lib/nodehook/work\"");
}

TEST_CASE("a minimal config gets the documented defaults") {
  const Config c = MustParse(MinimalConfig(), Sources({{"NODE_NAME", "node-b"}}));
  REQUIRE(c.api.in_cluster);
  REQUIRE(c.api.kubeconfig.empty());
  REQUIRE(c.resources[0].ref.group.empty());
  REQUIRE(c.resources[0].ref.namespace_name.empty());
  REQUIRE(c.resources[0].ignored_paths.empty());
  REQUIRE(c.resources[0].hooks.at("create").timeout == std::chrono::seconds(60));
  REQUIRE(CoreTuning(c.tuning) == "log_level info, workers 4, watch_timeout_seconds 300, retry_base_seconds 1, "
                                  "retry_max_seconds 300, hook_work_dir \"\"");
}

TEST_CASE("node_name defaults to NODE_NAME from the downward API") {
  REQUIRE(MustParse(MinimalConfig(), Sources({{"NODE_NAME", "node-from-env"}})).node_name == "node-from-env");
}

TEST_CASE("api in_cluster true means in cluster") {
  REQUIRE(MustParse(MinimalConfig(R"("api": {"in_cluster": true})")).api.in_cluster);
}

TEST_CASE("api with both in_cluster and kubeconfig is refused") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("api": {"in_cluster": true, "kubeconfig": "/k"})"), "api");
  REQUIRE(e.message == "expected exactly one of: in_cluster, kubeconfig");
}

TEST_CASE("api in_cluster false is refused with a hint to set kubeconfig") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("api": {"in_cluster": false})"), "api.in_cluster");
  REQUIRE(e.message.find("set \"kubeconfig\" instead") != std::string::npos);
}
