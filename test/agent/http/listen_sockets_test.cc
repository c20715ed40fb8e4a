// The local server on every kind of address: IPv4, IPv6, dual-stack, names.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "agent/http/local_server.h"
#include "test/agent/http/raw_client.h"

namespace nodehook {
namespace {

// ::1 on the loopback interface; this machine has it, but say so clearly where it does not.
bool HasIpv6Loopback() {
  std::ifstream in("/proc/net/if_inet6");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("00000000000000000000000000000001", 0) == 0) return true;
  }
  return false;
}

// Says why a test is skipped; Catch2 2 has no SKIP.
bool Ipv6Missing() {
  if (HasIpv6Loopback()) return false;
  WARN("skipped: no IPv6 on this machine (no ::1 in /proc/net/if_inet6)");
  return true;
}

struct Served {
  LocalServer server;
  Status started;
  explicit Served(const std::string& host) : server(Options(host)) {
    server.Handle("/healthz", [](const LocalRequest&) {
      LocalResponse r;
      r.body = "ok\n";
      return r;
    });
    started = server.Start();
  }
  static LocalServerOptions Options(const std::string& host) {
    LocalServerOptions o;
    o.bind_address = host;
    return o;
  }
  std::string Probe(const std::string& client_host) { return BodyOf(HttpGet(server.port(), "/healthz", client_host)); }
};

TEST_CASE("0.0.0.0 serves IPv4 clients") {
  Served s("0.0.0.0");
  REQUIRE(s.started.ok());
  CHECK(s.Probe("127.0.0.1") == "ok\n");
  CHECK_FALSE(s.server.loopback_only());
}

TEST_CASE("[::] serves IPv6 and, dual-stack, IPv4 clients on one socket") {
  if (Ipv6Missing()) return;
  Served s("::");
  REQUIRE(s.started.ok());
  REQUIRE(s.server.listening().size() == 1);
  CHECK(s.server.listening()[0] == "[::]:" + std::to_string(s.server.port()) + " (dual-stack)");
  CHECK(s.Probe("::1") == "ok\n");
  CHECK(s.Probe("127.0.0.1") == "ok\n");
}

TEST_CASE("an empty host means every interface: IPv6 dual-stack where there is IPv6") {
  Served s("");
  REQUIRE(s.started.ok());
  CHECK(s.Probe("127.0.0.1") == "ok\n");
  if (HasIpv6Loopback()) CHECK(s.Probe("::1") == "ok\n");
}

TEST_CASE("[::1] serves IPv6 loopback clients on that address alone") {
  if (Ipv6Missing()) return;
  Served s("::1");
  REQUIRE(s.started.ok());
  CHECK(s.server.loopback_only());
  CHECK(s.Probe("::1") == "ok\n");
  CHECK(s.server.listening() == std::vector<std::string>{"[::1]:" + std::to_string(s.server.port())});
}

TEST_CASE("localhost is resolved with getaddrinfo and served on every address it names") {
  Served s("localhost");
  REQUIRE(s.started.ok());
  CHECK(s.server.loopback_only());
  REQUIRE_FALSE(s.server.listening().empty());
  for (const std::string& bound : s.server.listening()) {
    std::string host = bound.substr(0, bound.rfind(':'));
    if (host.front() == '[') host = host.substr(1, host.size() - 2);
    CHECK(s.Probe(host) == "ok\n");
  }
}

TEST_CASE("a name that does not resolve is an invalid address that names the host") {
  Served s("nodehook.invalid");
  CHECK(s.started.code() == StatusCode::kInvalid);
  CHECK_THAT(s.started.message(), Catch::Contains("cannot resolve \"nodehook.invalid\""));
}

}  // namespace
}  // namespace nodehook
