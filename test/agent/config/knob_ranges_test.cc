#include <catch2/catch.hpp>

#include <climits>
#include <fstream>
#include <sstream>

#include "agent/config/knobs.h"
#include "test/agent/config/config_test_util.h"

using namespace nodehook;

namespace {

// Where a knob's value comes from in one case of the table, and how errors name that source.
enum class Source { kFile, kEnv, kFlag };

struct Given {
  ConfigResult result;
  std::string origin;  // "tuning.workers", "env NODEHOOK_WORKERS", "flag --workers"
};

// Sets `knob` to `value` (JSON text for the file) from `source`; everything else stays default,
// except that retry_max_seconds follows a large retry_base_seconds so the pair stays valid.
Given SetKnob(const KnobBinding& knob, const std::string& value, Source source) {
  std::map<std::string, std::string> env = {{"NODE_NAME", "n"}};
  std::map<std::string, std::string> flags;
  if (knob.info.name == "retry_base_seconds") flags["retry_max_seconds"] = "604800";
  std::string extra;
  Given given;
  switch (source) {
    case Source::kFile: {
      std::string key = knob.info.file_key.substr(knob.info.file_key.find('.') + 1);
      extra = knob.info.file_key.find('.') == std::string::npos ? "\"" + key + "\": " + value
                                                                : "\"tuning\": {\"" + key + "\": " + value + "}";
      given.origin = knob.info.file_key;
      break;
    }
    case Source::kEnv:
      env[knob.info.env] = value;
      given.origin = "env " + knob.info.env;
      break;
    case Source::kFlag:
      flags[knob.info.name] = value;
      given.origin = "flag " + knob.info.flag;
      break;
  }
  given.result = ParseConfig(MinimalConfig(extra), Sources(env, flags));
  return given;
}

std::string Message(const Given& given) {
  const ConfigError* e = FindError(given.result, given.origin);
  return e == nullptr ? "(no error at " + given.origin + ")" : e->message;
}

}  // namespace

TEST_CASE("every integer knob accepts its minimum and maximum from the file, the environment and a flag") {
  for (const KnobBinding& knob : KnobBindings()) {
    if (knob.type != KnobType::kInteger) continue;
    for (Source source : {Source::kFile, Source::kEnv, Source::kFlag}) {
      for (int value : {knob.min_value, knob.max_value}) {
        INFO(knob.info.name << " = " << value << " from source " << static_cast<int>(source));
        Given given = SetKnob(knob, std::to_string(value), source);
        INFO(AllErrors(given.result));
        REQUIRE(given.result.ok());
        Config config = given.result.config;
        REQUIRE(*knob.integer(config) == value);
      }
    }
  }
}

TEST_CASE("every integer knob refuses one below its minimum and one above its maximum, naming source, value, range") {
  for (const KnobBinding& knob : KnobBindings()) {
    if (knob.type != KnobType::kInteger) continue;
    const std::string range = "expected an integer from " + std::to_string(knob.min_value) + " to " +
                              std::to_string(knob.max_value) + ", got ";
    for (Source source : {Source::kFile, Source::kEnv, Source::kFlag}) {
      for (int64_t value : {int64_t{knob.min_value} - 1, int64_t{knob.max_value} + 1}) {
        INFO(knob.info.name << " = " << value << " from source " << static_cast<int>(source));
        Given given = SetKnob(knob, std::to_string(value), source);
        REQUIRE(Message(given) == range + std::to_string(value));
        Config config = given.result.config;
        Config defaults;
        REQUIRE(*knob.integer(config) == *knob.integer(defaults));  // a refused value changes nothing
      }
    }
  }
}

TEST_CASE("integers beyond any int are refused with the value as given, not wrapped around") {
  const KnobBinding* watch = nullptr;
  for (const KnobBinding& knob : KnobBindings()) watch = knob.info.name == "watch_timeout_seconds" ? &knob : watch;
  REQUIRE(watch != nullptr);
  CHECK(Message(SetKnob(*watch, "2147483648", Source::kEnv)) == "expected an integer from 1 to 86400, got 2147483648");
  CHECK(Message(SetKnob(*watch, "99999999999999999999999", Source::kFlag)) ==
        "expected an integer from 1 to 86400, got 99999999999999999999999");
  CHECK(Message(SetKnob(*watch, "2147483647", Source::kFile)) == "expected an integer from 1 to 86400, got 2147483647");
  CHECK(Message(SetKnob(*watch, "18446744073709551615", Source::kFile)) ==
        "expected an integer from 1 to 86400, got 18446744073709551615");
  CHECK(Message(SetKnob(*watch, "1e30", Source::kFile)) == "expected an integer from 1 to 86400, got 1e+30");
}

TEST_CASE("every integer knob's default lies in its range") {
  Config defaults;
  for (const KnobBinding& knob : KnobBindings()) {
    if (knob.type != KnobType::kInteger) continue;
    INFO(knob.info.name);
    CHECK(knob.min_value <= *knob.integer(defaults));
    CHECK(*knob.integer(defaults) <= knob.max_value);
    CHECK(knob.info.range == std::to_string(knob.min_value) + " to " + std::to_string(knob.max_value));
  }
}

TEST_CASE("the largest watch timeout still doubles inside an int, as the watcher draws from [T, 2T)") {
  for (const KnobBinding& knob : KnobBindings()) {
    if (knob.info.name == "watch_timeout_seconds") CHECK(int64_t{knob.max_value} * 2 - 1 <= INT_MAX);
  }
}

TEST_CASE("true-or-false knobs take true and false, and refuse anything else with the source and the value") {
  for (const KnobBinding& knob : KnobBindings()) {
    if (knob.type != KnobType::kBool) continue;
    INFO(knob.info.name);
    Config defaults;
    REQUIRE_FALSE(*knob.boolean(defaults));
    for (Source source : {Source::kFile, Source::kEnv, Source::kFlag}) {
      Given on = SetKnob(knob, "true", source);
      INFO(AllErrors(on.result));
      REQUIRE(on.result.ok());
      REQUIRE(*knob.boolean(on.result.config));
      Given off = SetKnob(knob, "false", source);
      REQUIRE_FALSE(*knob.boolean(off.result.config));
    }
    CHECK(Message(SetKnob(knob, "1", Source::kFile)) == "expected true or false, got number");
    CHECK(Message(SetKnob(knob, "yes", Source::kEnv)) == "expected true or false, got \"yes\"");
    CHECK(Message(SetKnob(knob, "TRUE", Source::kFlag)) == "expected true or false, got \"TRUE\"");
  }
}

TEST_CASE("per-hook timeouts and limits have ranges too") {
  ConfigResult result = ParseConfig(R"({"state_file": "/s.db", "resources": [{"version": "v1", "plural": "w",
      "hooks": {"create": {"argv": ["/h"], "timeout_seconds": 2147483647, "max_retries": 0,
                           "max_total_seconds": 1e40}}}]})",
                                    Sources({{"NODE_NAME", "n"}}));
  const std::string hook = "resources[0].hooks.create.";
  REQUIRE(FindError(result, hook + "timeout_seconds") != nullptr);
  CHECK(FindError(result, hook + "timeout_seconds")->message == "expected an integer from 1 to 604800, got 2147483647");
  CHECK(FindError(result, hook + "max_retries")->message == "expected an integer from 1 to 1000000, got 0");
  CHECK(FindError(result, hook + "max_total_seconds")->message == "expected an integer from 1 to 31536000, got 1e+40");
}

TEST_CASE("docs/configuration.md lists every knob's valid values") {
  std::ifstream in(std::string(NODEHOOK_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const KnobInfo& knob : Knobs()) {
    if (knob.range.empty()) continue;
    std::string row = "| `" + knob.name + "` | " + knob.range + " |";
    INFO("docs/configuration.md should have the row: " << row);
    CHECK(text.str().find(row) != std::string::npos);
  }
}
