// health_address / admin_address / admin_token_file as the config sees them.
#include <catch2/catch.hpp>

#include "test/agent/config/config_test_util.h"

using namespace nodehook;

TEST_CASE("by default probes listen on every interface and the admin endpoint on loopback only") {
  const Tuning t = MustParse(MinimalConfig()).tuning;
  CHECK(t.health_address == ":8090");
  CHECK(t.admin_address == "127.0.0.1:8091");
  CHECK(t.admin_token_file.empty());
}

TEST_CASE("an admin address off loopback without a token file is refused, naming the line and the fix") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("tuning": {
      "admin_address": "0.0.0.0:8091"})"), "tuning.admin_address");
  CHECK(e.line == 3);
  CHECK(e.message ==
        "\"0.0.0.0:8091\" is not a loopback address, so POST /v1/retry would be open to the network; expected "
        "127.0.0.1, [::1] or localhost, or set admin_token_file");
}

TEST_CASE("an admin address given by flag is checked like one in the file") {
  ErrorAt(MinimalConfig(), "flag --admin-address", Sources({{"NODE_NAME", "n"}}, {{"admin_address", "[::]:8091"}}));
  MustParse(MinimalConfig(),
            Sources({{"NODE_NAME", "n"}}, {{"admin_address", "[::]:8091"}, {"admin_token_file", "/t"}}));
}

TEST_CASE("loopback admin addresses need no token") {
  for (const char* address : {"127.0.0.1:8091", "[::1]:8091", "localhost:0"}) {
    ConfigResult result = ParseConfig(MinimalConfig(), Sources({{"NODE_NAME", "n"}, {"NODEHOOK_ADMIN_ADDRESS", address}}));
    INFO(address << "\n" << AllErrors(result));
    CHECK(result.ok());
  }
}

TEST_CASE("a malformed health address is a config error, not a failure at start") {
  const ConfigError e = ErrorAt(MinimalConfig(R"("tuning": {"health_address": "8090"})"), "tuning.health_address");
  CHECK_THAT(e.message, Catch::StartsWith("health_address \"8090\": expected HOST:PORT"));
}
