#include <catch2/catch.hpp>

#include "agent/kube/http_transport.h"

namespace nodehook {
namespace {

TEST_CASE("a refused connection is reported as unavailable, not thrown") {
  TransportConfig config;
  config.server = "http://127.0.0.1:1";  // nothing listens on port 1
  auto transport = NewCpprestTransport(config);
  auto resp = transport->Send(HttpRequest{});
  REQUIRE_FALSE(resp.ok());
  CHECK(resp.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(resp.status().message(), Catch::Contains("127.0.0.1:1"));
}

TEST_CASE("unusable TLS material or server address fails every request with kInvalid") {
  TransportConfig bad_ca;
  bad_ca.server = "https://127.0.0.1:1";
  bad_ca.ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  auto resp = NewCpprestTransport(bad_ca)->Send(HttpRequest{});
  CHECK(resp.status().code() == StatusCode::kInvalid);
  CHECK_THAT(resp.status().message(), Catch::Contains("certificate authority"));

  TransportConfig bad_server;
  bad_server.server = "not a uri";
  CHECK(NewCpprestTransport(bad_server)->Send(HttpRequest{}).status().code() == StatusCode::kInvalid);
}

}  // namespace
}  // namespace nodehook
