// The check and snapshot hooks' own keys (issue 12): interval_seconds, jitter_percent, run_on_start.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// One resource with `hooks`; the hooks object starts on line 4.
std::string ConfigWithHooks(const std::string& hooks) { return OneResource("\"hooks\": {\n" + hooks + "}"); }

}  // namespace

TEST_CASE("a check hook reads its interval and jitter, a snapshot hook run_on_start") {
  const WatchedResource r =
      MustParse(ConfigWithHooks(R"("check": {"argv": ["/h"], "interval_seconds": 300, "jitter_percent": 20},
"snapshot": {"argv": ["/s"], "run_on_start": true})")).resources.at(0);
  CHECK(r.hooks.at("check").interval_seconds == 300);
  CHECK(r.hooks.at("check").jitter_percent == 20);
  CHECK(r.hooks.at("snapshot").run_on_start);
  CHECK(r.hooks.at("snapshot").argv == std::vector<std::string>{"/s"});
}

TEST_CASE("a check hook without interval_seconds is an error at the hook's line") {
  const ConfigError e =
      ErrorAt(ConfigWithHooks("\"check\": {\"argv\": [\"/h\"]}"), "resources[0].hooks.check.interval_seconds");
  CHECK(e.line == 5);
  CHECK(e.message == "missing (expected seconds between two checks of an object, at least 1, e.g. 300)");
}

TEST_CASE("interval_seconds below 1 and jitter_percent above 50 are errors naming the range") {
  const std::string config =
      ConfigWithHooks("\"check\": {\"argv\": [\"/h\"],\n\"interval_seconds\": 0,\n\"jitter_percent\": 51}");
  const ConfigError interval = ErrorAt(config, "resources[0].hooks.check.interval_seconds");
  CHECK(interval.line == 6);
  CHECK(interval.message.find("1 to 31536000") != std::string::npos);
  const ConfigError jitter = ErrorAt(config, "resources[0].hooks.check.jitter_percent");
  CHECK(jitter.line == 7);
  CHECK(jitter.message.find("0 to 50") != std::string::npos);
}

TEST_CASE("check keys on other hooks and run_on_start on a check are unknown keys") {
  ConfigResult result = ParseConfig(ConfigWithHooks(R"("create": {"argv": ["/h"], "interval_seconds": 5},
"check": {"argv": ["/h"], "interval_seconds": 5, "run_on_start": true})"),
                                    kNode);
  CHECK(FindError(result, "resources[0].hooks.create.interval_seconds") != nullptr);
  CHECK(FindError(result, "resources[0].hooks.check.run_on_start") != nullptr);
}
