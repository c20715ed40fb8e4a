// Credential handling: token re-read after 401 with one retry, CA file followed as it changes,
// rejected credentials logged at most once a minute. Real cpprest transport over loopback.
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "agent/base/log.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/credentials/connection_config.h"
#include "agent/kube/credentials/file_source.h"
#include "agent/kube/transport/log_limiter.h"
#include "test/agent/kube/client/kube_test_data.h"
#include "test/agent/kube/credentials/test_ca.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_api_server.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {


FakeResponse Status401() {
  FakeResponse r;
  r.status = 401;
  r.chunked = false;
  r.chunks = {R"({"kind":"Status","code":401,"message":"Unauthorized"})"};
  return r;
}

FakeResponse ListOf(const std::string& rv) {
  FakeResponse r;
  r.chunked = false;
  r.chunks = {WidgetListJson(rv, "", WidgetJson("a", "1"))};
  return r;
}

struct TokenFileFixture {
  TempDir dir;
  FakeClock clock;
  std::string path = dir.Write("token", "old-token\n");
  FakeApiServer server;

  TransportConfig Config() {
    TransportConfig config;
    config.server = server.url();
    RotatingToken token = RotatingTokenSource(path, "old-token", clock);
    config.bearer_token = token.current;
    config.reload_bearer_token = token.reload;
    return config;
  }
};

TEST_CASE("after a 401 the token file is re-read at once and the request retried with the new token") {
  TokenFileFixture f;
  RestKubeClient client(NewCpprestTransport(f.Config()));
  f.dir.Write("token", "new-token\n");  // rotated; the one-minute refresh is not due yet
  f.server.Enqueue(Status401());
  f.server.Enqueue(ListOf("42"));
  auto list = client.List(WidgetsRef(), {});
  REQUIRE(list.ok());
  CHECK(list->resource_version == "42");
  auto requests = f.server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].Header("authorization") == "Bearer old-token");
  CHECK(requests[1].Header("authorization") == "Bearer new-token");

  SECTION("later requests use the re-read token from the start") {
    f.server.Enqueue(ListOf("43"));
    REQUIRE(client.List(WidgetsRef(), {}).ok());
    CHECK(f.server.requests().at(2).Header("authorization") == "Bearer new-token");
  }
}

TEST_CASE("a watch answered 401 is retried with the re-read token before any event") {
  TokenFileFixture f;
  RestKubeClient client(NewCpprestTransport(f.Config()));
  f.dir.Write("token", "new-token\n");
  f.server.Enqueue(Status401());
  FakeResponse events;
  events.chunks = {EventLine("ADDED", WidgetJson("a", "5"))};
  f.server.Enqueue(events);
  std::vector<std::string> names;
  CancelToken cancel;
  Status st = client.Watch(WidgetsRef(), {}, [&](WatchEvent e) { names.push_back(e.object.meta.name); }, cancel);
  REQUIRE(st.ok());
  CHECK(names == std::vector<std::string>{"a"});
  CHECK(f.server.requests().at(1).Header("authorization") == "Bearer new-token");
}

TEST_CASE("a 401 with an unchanged token is not resent, and is logged once a minute at most") {
  TokenFileFixture f;
  RestKubeClient client(NewCpprestTransport(f.Config()));
  CapturedLog log;
  for (int i = 0; i < 3; ++i) f.server.Enqueue(Status401());
  for (int i = 0; i < 3; ++i) CHECK(client.List(WidgetsRef(), {}).status().code() == StatusCode::kUnauthorized);
  CHECK(f.server.requests().size() == 3);
  CHECK(log.Count("API server rejected our credentials") == 1);
}

TEST_CASE("a 401 for the re-read token too is returned, not retried again") {
  TokenFileFixture f;
  RestKubeClient client(NewCpprestTransport(f.Config()));
  f.dir.Write("token", "also-wrong\n");
  f.server.Enqueue(Status401());
  f.server.Enqueue(Status401());
  f.server.Enqueue(ListOf("1"));  // must not be reached
  CHECK(client.List(WidgetsRef(), {}).status().code() == StatusCode::kUnauthorized);
  CHECK(f.server.requests().size() == 2);
}

TEST_CASE("a changed CA bundle rebuilds the client; an unusable one is refused and the old one kept") {
  FakeApiServer server;
  std::mutex mu;
  std::string ca_now = kTestCaPem;
  TransportConfig config;
  config.server = server.url();
  config.ca_pem = kTestCaPem;
  config.ca_pem_source = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return ca_now;
  };
  RestKubeClient client(NewCpprestTransport(config));
  CapturedLog log;
  server.Enqueue(ListOf("1"));
  REQUIRE(client.List(WidgetsRef(), {}).ok());
  CHECK(log.Count("CA bundle changed") == 0);

  {
    std::lock_guard<std::mutex> lock(mu);
    ca_now = std::string(kTestCaPem) + kTestCaPem;  // a bundle of two
  }
  server.Enqueue(ListOf("2"));
  REQUIRE(client.List(WidgetsRef(), {}).ok());
  CHECK(log.Count("CA bundle changed") == 1);

  {
    std::lock_guard<std::mutex> lock(mu);
    ca_now = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  }
  server.Enqueue(ListOf("3"));
  REQUIRE(client.List(WidgetsRef(), {}).ok());
  CHECK(log.Count("CA bundle changed but is unusable") == 1);
}

TEST_CASE("a transport whose CA was unusable at start recovers when the CA file is fixed") {
  FakeApiServer server;
  std::mutex mu;
  std::string ca_now = "garbage";
  TransportConfig config;
  config.server = server.url();
  config.ca_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  ca_now = config.ca_pem;
  config.ca_pem_source = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return ca_now;
  };
  RestKubeClient client(NewCpprestTransport(config));
  CHECK(client.List(WidgetsRef(), {}).status().code() == StatusCode::kInvalid);
  {
    std::lock_guard<std::mutex> lock(mu);
    ca_now = kTestCaPem;
  }
  server.Enqueue(ListOf("9"));
  CHECK(client.List(WidgetsRef(), {}).ok());
}

TEST_CASE("a log limiter lets one line through per interval and counts the rest") {
  FakeClock clock;
  LogLimiter limiter(clock, std::chrono::minutes(1));
  int suppressed = -1;
  CHECK(limiter.Allow(&suppressed));
  CHECK(suppressed == 0);
  CHECK_FALSE(limiter.Allow(&suppressed));
  clock.Advance(std::chrono::seconds(59));
  CHECK_FALSE(limiter.Allow(&suppressed));
  clock.Advance(std::chrono::seconds(1));
  CHECK(limiter.Allow(&suppressed));
  CHECK(suppressed == 2);
}

TEST_CASE("a watched file is re-read when it changes and keeps its last contents when it vanishes") {
  TempDir dir;
  std::string path = dir.Write("ca.crt", "first");
  auto content = WatchedFileContent(path, "first");
  CHECK(content() == "first");
  dir.Write("ca.crt", "second, longer");
  CHECK(content() == "second, longer");
  std::filesystem::remove(path);
  CapturedLog log;
  CHECK(content() == "second, longer");
  CHECK(log.Count("file unreadable") == 1);
  dir.Write("ca.crt", "third");
  CHECK(content() == "third");
}

TEST_CASE("kubeconfig CA and token files are followed: CA on change, token reloadable after a 401") {
  TempDir dir;
  dir.Write("ca.crt", "CA ONE");
  dir.Write("token", "t1\n");
  std::string path = dir.Write("config.json", R"({
    "current-context": "c",
    "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    "clusters": [{"name": "k", "cluster": {"server": "https://k:443", "certificate-authority": "ca.crt"}}],
    "users": [{"name": "u", "user": {"tokenFile": "token"}}]
  })");
  auto config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  REQUIRE(config->ca_pem_source);
  REQUIRE(config->reload_bearer_token);
  dir.Write("ca.crt", "CA TWO, rotated");
  CHECK(config->ca_pem_source() == "CA TWO, rotated");
  dir.Write("token", "t2\n");
  CHECK(*config->bearer_token() == "t1");  // the minute has not passed
  CHECK(*config->reload_bearer_token("t1") == "t2");
  CHECK(*config->bearer_token() == "t2");
}

}  // namespace
}  // namespace nodehook
