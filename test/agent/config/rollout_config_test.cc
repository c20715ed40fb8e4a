// A resource's "rollout" block (issue 17): what it reads, its defaults, and each error with its
// key and line. NodeCount::Resolve, which turns "10%" into a number of nodes.
#include <catch2/catch.hpp>

#include <climits>
#include <fstream>
#include <sstream>

#include "test/agent/config/config_test_util.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

void CheckError(const std::string& member, const std::string& path, const std::string& message, int line = 6) {
  ConfigError e = RolloutError(member);
  CHECK(e.path == "resources[0].rollout." + path);
  CHECK(e.message == message);
  CHECK(e.line == line);
}

// The one error of `config` is about the rollout block itself (line 5).
void CheckBlockError(const std::string& config, const std::string& message) {
  CHECK(OnlyErrorIn(config).ToString("c.json") == "c.json:5: resources[0].rollout: " + message);
}

const std::string kNodeCountExpected =
    "expected a number of nodes from 1 to 100000, or a percentage of the nodes from \"1%\" to \"100%\", e.g. 2 or "
    "\"10%\", got ";

}  // namespace

TEST_CASE("a rollout block reads every key") {
  RolloutPolicy p = ParsedRollout(R"({
    "max_nodes": 2,
    "canary_nodes": 1,
    "soak_seconds": 60,
    "verify": {"argv": ["/hooks/verify", "--quick"], "timeout_seconds": 120},
    "max_failed_nodes": "20%",
    "failure_after_retries": 5,
    "reasons": ["update", "create"],
    "windows": [{"cron": "0 22 * * 1-5", "duration_seconds": 14400, "time_zone": "Europe/Berlin"},
                {"cron": "0 3 * * SAT,SUN", "duration_seconds": 3600}],
    "hold_label": "example.com/hold",
    "slot_lease_seconds": 30,
    "max_grants_per_second": 2.5})");
  CHECK(p.max_nodes.value == 2);
  CHECK_FALSE(p.max_nodes.percent);
  CHECK(p.canary_nodes == 1);
  CHECK(p.soak == std::chrono::seconds(60));
  REQUIRE(p.verify.has_value());
  CHECK(p.verify->argv == std::vector<std::string>{"/hooks/verify", "--quick"});
  CHECK(p.verify->timeout == std::chrono::seconds(120));
  CHECK(p.max_failed_nodes.value == 20);
  CHECK(p.max_failed_nodes.percent);
  CHECK(p.failure_after_retries == 5);
  CHECK(p.reasons == std::vector<std::string>{"update", "create"});
  REQUIRE(p.windows.size() == 2);
  CHECK(p.windows[0].cron == "0 22 * * 1-5");
  CHECK(p.windows[0].duration == std::chrono::seconds(14400));
  CHECK(p.windows[0].time_zone == "Europe/Berlin");
  CHECK(p.windows[1].time_zone == "UTC");
  CHECK(p.hold_label == "example.com/hold");
  CHECK(p.slot_lease == std::chrono::seconds(30));
  CHECK(p.max_grants_per_second == 2.5);
}

TEST_CASE("an empty rollout block takes the defaults: one node at a time, no canary, always open") {
  RolloutPolicy p = ParsedRollout("{}");
  CHECK(p.max_nodes.value == 1);
  CHECK_FALSE(p.max_nodes.percent);
  CHECK(p.canary_nodes == 0);
  CHECK(p.soak == std::chrono::seconds(0));
  CHECK_FALSE(p.verify.has_value());
  CHECK(p.max_failed_nodes.value == 1);
  CHECK_FALSE(p.max_failed_nodes.percent);
  CHECK(p.failure_after_retries == 3);
  CHECK(p.reasons == std::vector<std::string>{"create", "update"});
  CHECK(p.windows.empty());
  CHECK(p.hold_label == "nodehook.io/rollout-hold");
  CHECK(p.max_grants_per_second == 20);
  CHECK(p.slot_lease == std::chrono::seconds(15));
}

TEST_CASE("max_nodes may be a percentage of the nodes") {
  CHECK(ParsedRollout(R"({"max_nodes": "10%"})").max_nodes.value == 10);
  CHECK(ParsedRollout(R"({"max_nodes": "10%"})").max_nodes.percent);
  CHECK(ParsedRollout(R"({"max_nodes": "100%"})").max_nodes.value == 100);
  CHECK(ParsedRollout(R"({"max_nodes": "1%"})").max_nodes.value == 1);
}

TEST_CASE("a resource without a rollout block has no policy") {
  ConfigResult result = ParseConfig(MinimalConfig(), kNode);
  REQUIRE(result.ok());
  CHECK_FALSE(result.config.resources.at(0).rollout.has_value());
}

TEST_CASE("by default a rollout gates create and update where the resource has those hooks") {
  CHECK(ParsedRollout("{}", R"("create": {"argv": ["/h"]}, "delete": {"argv": ["/h"]})").reasons ==
        std::vector<std::string>{"create"});
  CHECK(ParsedRollout(R"({"reasons": ["delete", "resume"]})",
                      R"("delete": {"argv": ["/h"]}, "resume": {"argv": ["/h"]})").reasons ==
        std::vector<std::string>{"delete", "resume"});
  CheckBlockError(WithRollout("{}", R"("delete": {"argv": ["/h"]})"),
                  "gates create and update by default, but the resource has neither hook; list the reasons to gate "
                  "in \"reasons\" (one or more of: create, update, delete, resume)");
}

TEST_CASE("rollout errors: unknown keys, and the block itself") {
  CheckError("\"max_node\": 2", "max_node",
             "unknown key (expected one of: max_nodes, canary_nodes, soak_seconds, verify, max_failed_nodes, "
             "failure_after_retries, reasons, windows, hold_label, slot_lease_seconds, max_grants_per_second, cordon, drain, reboot, on_failure)");
  CheckBlockError(WithRollout("[]"), "expected an object, got array");
}

TEST_CASE("rollout errors: max_nodes and max_failed_nodes take 1 or more nodes, or 1% to 100%") {
  // Each value as JSON, and as the message shows it.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"0", "0"},           {"100001", "100001"},   {"2.5", "2.5"},         {"true", "boolean"},
      {"\"0%\"", "\"0%\""}, {"\"101%\"", "\"101%\""}, {"\"10 %\"", "\"10 %\""}, {"\"05%\"", "\"05%\""},
      {"\"%\"", "\"%\""},   {"\"2\"", "\"2\""}};
  for (const auto& [json, shown] : bad) CheckError("\"max_nodes\": " + json, "max_nodes", kNodeCountExpected + shown);
  CheckError("\"max_failed_nodes\": \"abc\"", "max_failed_nodes", kNodeCountExpected + "\"abc\"");
  CheckError("\"max_failed_nodes\": 0", "max_failed_nodes", kNodeCountExpected + "0");
}

TEST_CASE("rollout errors: counts and seconds out of their ranges") {
  CheckError("\"canary_nodes\": -1", "canary_nodes", "expected an integer from 0 to 100000, got -1");
  CheckError("\"soak_seconds\": -1", "soak_seconds", "expected an integer from 0 to 604800, got -1");
  CheckError("\"soak_seconds\": \"60\"", "soak_seconds", "expected an integer from 0 to 604800, got string");
  CheckError("\"failure_after_retries\": 0", "failure_after_retries",
             "expected an integer from 1 to 1000000, got 0");
  CheckError("\"slot_lease_seconds\": 2", "slot_lease_seconds", "expected an integer from 3 to 3600, got 2");
  CheckError("\"slot_lease_seconds\": 3601", "slot_lease_seconds", "expected an integer from 3 to 3600, got 3601");
  CheckError("\"max_grants_per_second\": 0", "max_grants_per_second", "expected a number from 0.1 to 10000, got 0");
  CheckError("\"max_grants_per_second\": \"50\"", "max_grants_per_second",
             "expected a number from 0.1 to 10000, got string");
}

TEST_CASE("rollout errors: verify is a hook with an absolute argv") {
  CheckError("\"verify\": {\"timeout_seconds\": 5}", "verify.argv",
             "missing (expected the hook's program and arguments, e.g. [\"/hooks/run\"])");
  CheckError("\"verify\": {\"argv\": [\"verify\"]}", "verify.argv[0]",
             "expected an absolute path to the hook program, e.g. \"/hooks/run\", got \"verify\"");
  CheckError("\"verify\": {\"argv\": [\"/v\"], \"interval_seconds\": 5}", "verify.interval_seconds",
             "unknown key (expected one of: argv, timeout_seconds, max_retries, max_total_seconds)");
  CheckError("\"verify\": \"/v\"", "verify", "expected an object, got string");
}

TEST_CASE("rollout errors: each reason is one of four, once, and has its hook") {
  CheckError("\"reasons\": [\"event\"]", "reasons[0]", "expected one of: create, update, delete, resume, got \"event\"");
  CheckError("\"reasons\": [\"create\", \"delete\"]", "reasons[1]",
             "gates \"delete\", but the resource has no delete hook (hooks.delete)");
  CheckError("\"reasons\": [\"create\", \"create\"]", "reasons[1]", "\"create\" is listed twice");
  CheckError("\"reasons\": []", "reasons", "expected a non-empty array of non-empty strings, got []");
  CheckError("\"reasons\": \"create\"", "reasons", "expected a non-empty array of non-empty strings, got string");
}

TEST_CASE("rollout errors: windows need a cron that parses and a duration from 60 s to 7 days") {
  CheckError("\"windows\": {}", "windows",
             "expected an array of windows, each {\"cron\": ..., \"duration_seconds\": ..., \"time_zone\": ...}, got "
             "object");
  CheckError("\"windows\": [7]", "windows[0]", "expected an object, got number");
  CheckError("\"windows\": [{\"duration_seconds\": 60}]", "windows[0].cron",
             "missing (expected a 5-field cron expression (minute hour day-of-month month day-of-week) for the "
             "window's starts, e.g. \"0 22 * * 1-5\")");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\"}]", "windows[0].duration_seconds",
             "missing (expected how long each start keeps the window open, 10 to 604800 seconds, e.g. 14400)");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * 1-8\", \"duration_seconds\": 60}]", "windows[0].cron",
             "expected a 5-field cron expression (minute hour day-of-month month day-of-week) for the window's "
             "starts, e.g. \"0 22 * * 1-5\"; day-of-week field \"1-8\": expected *, a number from 0 to 7 or a name, "
             "a range a-b, a step */n or a-b/n, or a list of these separated by commas, e.g. 0-7 (0 and 7 are "
             "Sunday), SUN-SAT or MON-FRI");
  CheckError("\"windows\": [{\"cron\": \"0 22 * *\", \"duration_seconds\": 60}]", "windows[0].cron",
             "expected a 5-field cron expression (minute hour day-of-month month day-of-week) for the window's "
             "starts, e.g. \"0 22 * * 1-5\"; expected 5 fields (minute hour day-of-month month day-of-week), e.g. "
             "\"0 22 * * 1-5\", got 4");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 9}]", "windows[0].duration_seconds",
             "expected an integer from 10 to 604800, got 9");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 604801}]",
             "windows[0].duration_seconds", "expected an integer from 10 to 604800, got 604801");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 60, \"zone\": \"UTC\"}]",
             "windows[0].zone", "unknown key (expected one of: cron, duration_seconds, time_zone)");
}

TEST_CASE("rollout errors: a window's time zone must exist under the zoneinfo directory") {
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 60, \"time_zone\": \"Europe/Berlinn\"}]",
             "windows[0].time_zone",
             "expected an IANA time zone such as \"Europe/Berlin\" or \"UTC\"; unknown time zone \"Europe/Berlinn\": "
             "no file /usr/share/zoneinfo/Europe/Berlinn");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 60, \"time_zone\": \"../etc/passwd\"}]",
             "windows[0].time_zone",
             "expected an IANA time zone such as \"Europe/Berlin\" or \"UTC\"; time zone \"../etc/passwd\": expected an "
             "IANA name such as Europe/Berlin (letters, digits and /_+-, no \"..\" part, not absolute)");
  CheckError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 60, \"time_zone\": \"\"}]",
             "windows[0].time_zone", "expected a non-empty string, got \"\"");
}

TEST_CASE("the zoneinfo directory is $TZDIR when set") {
  TempDir empty;
  ConfigSources sources = Sources({{"NODE_NAME", "n"}, {"TZDIR", empty.path()}});
  ConfigError e = RolloutError("\"windows\": [{\"cron\": \"0 22 * * *\", \"duration_seconds\": 60, \"time_zone\": "
                               "\"Europe/Berlin\"}]",
                               kCreateUpdate, sources);
  CHECK(e.message.find("no file " + empty.path() + "/Europe/Berlin") != std::string::npos);
  // UTC is built in, so it needs no file.
  ConfigResult utc = ParseConfig(
      WithRollout(R"({"windows": [{"cron": "0 22 * * *", "duration_seconds": 60, "time_zone": "UTC"}]})"), sources);
  CHECK(utc.ok());
  CHECK(utc.config.zoneinfo_dir == empty.path());
  CHECK(ParseConfig(MinimalConfig(), kNode).config.zoneinfo_dir == "/usr/share/zoneinfo");
}

TEST_CASE("rollout errors: hold_label is a label key") {
  const std::string expected =
      "expected a label key such as \"nodehook.io/rollout-hold\" (an optional DNS prefix and \"/\", then up to 63 "
      "letters, digits, \"-\", \"_\" or \".\"), got ";
  for (const char* bad : {"hold me", "-hold", "a/b/c", "Example.com/hold", "example..com/hold", "example.com/",
                          "/hold"}) {
    CheckError(std::string("\"hold_label\": \"") + bad + "\"", "hold_label", expected + "\"" + bad + "\"");
  }
  CHECK(ParsedRollout(R"({"hold_label": "hold"})").hold_label == "hold");
  CHECK(ParsedRollout(R"({"hold_label": "a.b-c/Hold_1.x"})").hold_label == "a.b-c/Hold_1.x");
  CheckError("\"hold_label\": \"" + std::string(64, 'a') + "\"", "hold_label",
             expected + "\"" + std::string(64, 'a') + "\"");
}

TEST_CASE("rollout cannot be combined with singleton") {
  CheckBlockError(WithRollout("{}", R"("create": {"argv": ["/h"]})", ", \"singleton\": true"),
                  "cannot be combined with \"singleton\": true (a singleton resource runs its hooks on one node, so "
                  "there is nothing to roll out)");
}

TEST_CASE("every problem of a rollout block is reported, each on its own line") {
  ConfigResult result = ParseConfig(
      WithRollout("{\n\"max_nodes\": 0,\n\"canary_nodes\": -1,\n\"reasons\": [\"delete\"],\n\"slot_lease_seconds\": 1}"),
      kNode);
  REQUIRE(result.errors.size() == 4);
  CHECK(result.errors[0].line == 6);
  CHECK(result.errors[1].line == 7);
  CHECK(result.errors[2].line == 8);
  CHECK(result.errors[3].line == 9);
}

TEST_CASE("the verify hook's program is checked on the node like the other hooks") {
  ConfigSources sources = kNode;
  sources.check_program = [](const std::string& program) {
    return program == "/hooks/verify" ? "hook program /hooks/verify does not exist" : "";
  };
  const ConfigError e = OnlyErrorIn(WithRollout(R"({"verify": {"argv": ["/hooks/verify"]}})"), sources);
  CHECK(e.path == "resources[0].rollout.verify.argv[0]");
  CHECK(e.message.find("hook program /hooks/verify does not exist (install it") == 0);
}

TEST_CASE("NodeCount resolves a number as it is and a percentage rounded up, within the fleet") {
  CHECK(NodeCount{2, false}.Resolve(10) == 2);
  CHECK(NodeCount{2, false}.Resolve(1) == 2);  // a number is not capped: more slots than nodes is harmless
  CHECK(NodeCount{0, false}.Resolve(10) == 0);
  CHECK(NodeCount{10, true}.Resolve(10) == 1);
  CHECK(NodeCount{10, true}.Resolve(11) == 2);
  CHECK(NodeCount{10, true}.Resolve(100) == 10);
  CHECK(NodeCount{10, true}.Resolve(1) == 1);  // at least one node
  CHECK(NodeCount{1, true}.Resolve(1000) == 10);
  CHECK(NodeCount{50, true}.Resolve(3) == 2);
  CHECK(NodeCount{100, true}.Resolve(7) == 7);
  CHECK(NodeCount{10, true}.Resolve(0) == 0);  // no nodes
  CHECK(NodeCount{0, true}.Resolve(10) == 0);
  CHECK(NodeCount{100, true}.Resolve(INT_MAX) == INT_MAX);
  CHECK(NodeCount{150, true}.Resolve(10) == 10);  // never more than the fleet
}

TEST_CASE("check-config prints a resource's rollout policy under its hooks") {
  TempDir dir;
  const std::string file = dir.File("c.json");
  std::ofstream(file) << WithRollout(R"({"max_nodes": "10%", "canary_nodes": 1, "soak_seconds": 60,
      "verify": {"argv": ["/hooks/verify"]}, "max_failed_nodes": 2,
      "windows": [{"cron": "0 22 * * 1-5", "duration_seconds": 14400, "time_zone": "Europe/Berlin"}]})");
  std::ostringstream out, err;
  REQUIRE(RunCheckConfig(file, kNode, out, err) == 0);
  CHECK(out.str().find("    update: /h (timeout 60s)\n"
                       "    rollout: max_nodes 10%, canary_nodes 1, soak 60s, verify /hooks/verify, max_failed_nodes 2, "
                       "gates create update, window 0 22 * * 1-5 for 14400s in Europe/Berlin\n") != std::string::npos);
  std::ofstream(file) << WithRollout("{}");
  std::ostringstream defaults, ignored;
  REQUIRE(RunCheckConfig(file, kNode, defaults, ignored) == 0);
  CHECK(defaults.str().find("    rollout: max_nodes 1, canary_nodes 0, soak 0s, max_failed_nodes 1, gates create "
                            "update, always open\n") != std::string::npos);
}
