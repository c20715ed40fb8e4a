#include <catch2/catch.hpp>

#include "agent/kube/transport/http_transport.h"
#include "test/fakes/fake_api_server.h"

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


TEST_CASE("a success body over max_body_bytes fails naming the cap; an error body is cut to 64 KiB") {
  FakeApiServer server;
  TransportConfig config;
  config.server = server.url();
  auto transport = NewCpprestTransport(config);
  FakeResponse big;
  big.chunks = {std::string(3000, 'a'), std::string(3000, 'b')};
  server.Enqueue(big);
  HttpRequest req;
  req.path_and_query = "/apis/example.com/v1/widgets";
  req.max_body_bytes = 4096;
  auto capped = transport->Send(req);
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.status().code() == StatusCode::kInvalid);
  CHECK_THAT(capped.status().message(), Catch::Contains("response body larger than 4096 bytes"));

  FakeResponse huge_error;
  huge_error.status = 500;
  huge_error.chunks = {std::string(kMaxErrorBodyBytes, 'x'), std::string(kMaxErrorBodyBytes, 'y')};
  server.Enqueue(huge_error);
  auto error = transport->Send(HttpRequest{});
  REQUIRE(error.ok());
  CHECK(error->status == 500);
  CHECK(error->body == std::string(kMaxErrorBodyBytes, 'x'));
}

}  // namespace
}  // namespace nodehook
