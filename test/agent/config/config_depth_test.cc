#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "test/agent/config/config_test_util.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("a config nested 100,000 levels deep is refused with its line and the limit, not a crash") {
  ConfigResult result = ParseConfig("{\n\"tuning\":\n" + Nested(100'000) + "\n}", kNode);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].line == 3);
  CHECK(result.errors[0].message ==
        "too deeply nested: the object or array at column 64 is deeper than the limit of 64 levels "
        "(a nodehook config needs 6)");
}

TEST_CASE("deep nesting of objects inside a hook is refused at its own line") {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(5000, '}');
  ConfigResult result = ParseConfig(R"({"state_file": "/s.db",
  "resources": [{"version": "v1", "plural": "w",
    "hooks": {"create": {"argv": ["/h"], "x": )" + deep + "}}}]}",
                                    kNode);
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].line == 3);
  CHECK_THAT(result.errors[0].message, Catch::StartsWith("too deeply nested: "));
}

TEST_CASE("nesting up to the limit is parsed and reported like any other wrong value") {
  // The root object and "tuning" are levels 1 and 2, so 62 arrays reach exactly 64.
  ConfigResult result = ParseConfig(MinimalConfig("\"tuning\": {\"workers\": " + Nested(62) + "}"), kNode);
  REQUIRE(FindError(result, "") == nullptr);
  REQUIRE(FindError(result, "tuning.workers") != nullptr);
  CHECK(FindError(result, "tuning.workers")->message == "expected an integer from 1 to 256, got array");
  ConfigResult deeper = ParseConfig(MinimalConfig("\"tuning\": {\"workers\": " + Nested(63) + "}"), kNode);
  CHECK_THAT(FindError(deeper, "")->message, Catch::StartsWith("too deeply nested: "));
}

TEST_CASE("check-config names the file and line of a too deeply nested config and exits 2") {
  TempDir dir;
  std::string file = dir.File("deep.json");
  std::ofstream(file) << "{\n  \"resources\": " << Nested(200'000) << "\n}\n";
  std::ostringstream out, err;
  CHECK(RunCheckConfig(file, kNode, out, err) == 2);
  CHECK(err.str() == file + ":2: too deeply nested: the object or array at column 79 is deeper than the limit of 64 "
                            "levels (a nodehook config needs 6)\n");
}
