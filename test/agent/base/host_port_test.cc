#include <catch2/catch.hpp>

#include "agent/base/host_port.h"

namespace nodehook {
namespace {

HostPort Parsed(const std::string& address) {
  auto hp = ParseHostPort("health_address", address);
  REQUIRE(hp.ok());
  return *hp;
}

TEST_CASE("listen addresses split into host and port, IPv6 without brackets, empty host for every interface") {
  CHECK(Parsed(":8090").host.empty());
  CHECK(Parsed(":8090").port == 8090);
  CHECK(Parsed("0.0.0.0:8090").host == "0.0.0.0");
  CHECK(Parsed("[::]:8090").host == "::");
  CHECK(Parsed("[::1]:0").host == "::1");
  CHECK(Parsed("[::1]:0").port == 0);
  CHECK(Parsed("localhost:8091").host == "localhost");
}

TEST_CASE("a malformed listen address names the knob and what was expected") {
  for (const char* bad : {"8090", "localhost:", "[]:8090", "::1:8090", "host:80a", "host:123456", "host:70000"}) {
    auto hp = ParseHostPort("admin_address", bad);
    REQUIRE_FALSE(hp.ok());
    CHECK(hp.status().code() == StatusCode::kInvalid);
    CHECK_THAT(hp.status().message(), Catch::StartsWith(std::string("admin_address \"") + bad + "\""));
  }
  CHECK_THAT(ParseHostPort("admin_address", "::1:8090").status().message(), Catch::Contains("needs brackets"));
}

TEST_CASE("only addresses that can mean nothing but this machine count as loopback") {
  for (const char* host : {"localhost", "127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"}) CHECK(IsLoopbackHost(host));
  for (const char* host : {"", "0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::ffff:10.0.0.1", "node.example", "localhost.evil"}) {
    CHECK_FALSE(IsLoopbackHost(host));
  }
}

}  // namespace
}  // namespace nodehook
