// Cluster-singleton resources ("singleton": true) and the Lease knobs.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

std::string SingletonConfig(const std::string& members, const std::string& hooks = R"("create": {"argv": ["/h"]})",
                            const std::string& tuning = "{}") {
  return OneResource(members + ",\n\"hooks\": {" + hooks + "}", "\"tuning\": " + tuning);
}

}  // namespace

TEST_CASE("a singleton resource ignores its own handled-state annotation when comparing states") {
  const Config c = MustParse(SingletonConfig(R"("singleton": true, "ignored_paths": ["spec.x"])"));
  const WatchedResource& r = c.resources.at(0);
  CHECK(r.singleton);
  CHECK(r.ignored_paths == std::vector<std::string>{"spec.x", "metadata.annotations.nodehook.io/singleton-handled"});
}

TEST_CASE("singleton refuses what is per node: finalizers, node targeting, resume and event hooks") {
  ConfigResult result = ParseConfig(
      SingletonConfig(R"("singleton": true, "finalizer": true, "node_selector_path": "spec.nodeSelector")",
                      R"("create": {"argv": ["/h"]}, "resume": {"argv": ["/h"]}, "event": {"argv": ["/h"]})"),
      kNode);
  CHECK(ErrorsAt(result, "resources[0].singleton") ==
        std::vector<std::string>{
            "cannot be combined with \"finalizer\" (per-node finalizers)",
            "cannot be combined with \"node_selector_path\" (node targeting)",
            "a singleton resource takes only create, update and delete hooks, not \"resume\"",
            "a singleton resource takes only create, update and delete hooks, not \"event\""});
  const ConfigError* e = FindError(result, "resources[0].singleton");
  REQUIRE(e != nullptr);
  CHECK(e->line == 4);
}

TEST_CASE("without a singleton resource the lease knobs are not checked against each other") {
  MustParse(MinimalConfig(), Sources({{"NODE_NAME", "n"}}, {{"lease_duration_seconds", "4"}}));
}

TEST_CASE("the lease knobs default to client-go's 15 s, 10 s and 2 s") {
  const Tuning t = MustParse(SingletonConfig(R"("singleton": true)")).tuning;
  CHECK(t.lease_duration_seconds == 15);
  CHECK(t.lease_renew_deadline_seconds == 10);
  CHECK(t.lease_retry_period_seconds == 2);
  CHECK(t.lease_name == "nodehook-singleton");
  CHECK(t.lease_namespace.empty());
}

TEST_CASE("a renew deadline too close to the lease duration is refused: hooks must be dead before a takeover") {
  const ConfigError e =
      ErrorAt(SingletonConfig(R"("singleton": true)", R"("create": {"argv": ["/h"]})",
                              R"({"lease_duration_seconds": 12, "lease_renew_deadline_seconds": 10})"),
              "tuning.lease_renew_deadline_seconds");
  CHECK(e.line == 6);
  CHECK(e.message ==
        "lease_renew_deadline_seconds (10) must be at least 3 below lease_duration_seconds (12), so a leader's hooks "
        "are killed before another agent can take over");
}

TEST_CASE("a renew deadline must leave room for more than one retry, as client-go requires") {
  const ConfigError e = ErrorAt(
      SingletonConfig(R"("singleton": true)"), "flag --lease-renew-deadline-seconds",
      Sources({{"NODE_NAME", "n"}}, {{"lease_renew_deadline_seconds", "4"}, {"lease_retry_period_seconds", "4"}}));
  CHECK(e.message == "lease_renew_deadline_seconds (4) must be more than 1.2 x lease_retry_period_seconds (4)");
}
