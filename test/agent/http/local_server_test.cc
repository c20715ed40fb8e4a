// LocalServer over loopback with a raw socket client.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <vector>

#include "agent/http/local_server.h"
#include "test/agent/http/raw_client.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

LocalResponse Text(int status, std::string body) {
  LocalResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

struct ServerFixture {
  LocalServer server;
  explicit ServerFixture(LocalServerOptions options = {}) : server(options) {
    server.Handle("/hello", [](const LocalRequest& req) { return Text(200, "hello " + req.query + "\n"); });
    server.Handle("/echo", [](const LocalRequest& req) { return Text(200, req.method + ":" + req.body); },
                  {"POST"});
    REQUIRE(server.Start().ok());
  }
};

TEST_CASE("local server answers a registered path with status, body and Connection: close") {
  ServerFixture f;
  REQUIRE(f.server.port() > 0);
  std::string resp = HttpGet(f.server.port(), "/hello?who=me");
  CHECK(resp.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(resp.find("Connection: close\r\n") != std::string::npos);
  CHECK(resp.find("Content-Length: 13\r\n") != std::string::npos);
  CHECK(BodyOf(resp) == "hello who=me\n");
}

TEST_CASE("local server answers 404 for unknown paths and 405 with Allow for other methods") {
  ServerFixture f;
  CHECK(HttpGet(f.server.port(), "/nope").rfind("HTTP/1.1 404 ", 0) == 0);
  std::string wrong_method = HttpGet(f.server.port(), "/echo");
  CHECK(wrong_method.rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(wrong_method.find("Allow: POST\r\n") != std::string::npos);
}

TEST_CASE("a route ending in a slash serves the paths below it, and an exact route still wins") {
  LocalServer server(LocalServerOptions{});
  server.Handle("/v1/things", [](const LocalRequest&) { return Text(200, "all\n"); });
  server.Handle("/v1/things/", [](const LocalRequest& req) { return Text(200, "one " + req.path + "\n"); });
  server.Handle("/v1/things/special", [](const LocalRequest&) { return Text(200, "special\n"); });
  REQUIRE(server.Start().ok());
  CHECK(BodyOf(HttpGet(server.port(), "/v1/things")) == "all\n");
  CHECK(BodyOf(HttpGet(server.port(), "/v1/things/ns/a?x=1")) == "one /v1/things/ns/a\n");
  CHECK(BodyOf(HttpGet(server.port(), "/v1/things/special")) == "special\n");
  CHECK(StatusOf(HttpGet(server.port(), "/v1/thingsx")) == 404);
  CHECK(StatusOf(HttpGet(server.port(), "/v1/other/a")) == 404);
}

TEST_CASE("local server passes a POST body to its handler") {
  ServerFixture f;
  RawClient c(f.server.port());
  c.Send("POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nping");
  CHECK(BodyOf(c.ReadUntilClosed()) == "POST:ping");
}

TEST_CASE("a silent client does not delay another client's request") {
  LocalServerOptions options;
  options.read_timeout = seconds(60);  // far longer than the test: the answer cannot come from a timeout
  ServerFixture f(options);
  RawClient silent(f.server.port());
  REQUIRE(silent.Send("GET /hel"));  // and nothing more
  auto start = std::chrono::steady_clock::now();
  CHECK(BodyOf(HttpGet(f.server.port(), "/hello")) == "hello \n");
  CHECK(std::chrono::steady_clock::now() - start < seconds(5));
}

TEST_CASE("a client that never finishes its request gets 408 after the read timeout") {
  LocalServerOptions options;
  options.read_timeout = milliseconds(200);
  ServerFixture f(options);
  RawClient slow(f.server.port());
  REQUIRE(slow.Send("GET /hello HTTP/1.1\r\n"));
  std::string resp = slow.ReadUntilClosed();
  CHECK(resp.rfind("HTTP/1.1 408 ", 0) == 0);
  CHECK(slow.closed_by_server());
}

TEST_CASE("garbage gets 400, an oversized request 413, and the server keeps serving") {
  LocalServerOptions options;
  options.max_request_bytes = 256;
  ServerFixture f(options);
  RawClient garbage(f.server.port());
  garbage.Send(std::string("\x16\x03\x01 not http\r\n\r\n"));
  CHECK(garbage.ReadUntilClosed().rfind("HTTP/1.1 400 ", 0) == 0);
  RawClient huge(f.server.port());
  huge.Send("GET /hello HTTP/1.1\r\nX-Padding: " + std::string(400, 'x'));
  CHECK(huge.ReadUntilClosed().rfind("HTTP/1.1 413 ", 0) == 0);
  CHECK(BodyOf(HttpGet(f.server.port(), "/hello")) == "hello \n");
}

TEST_CASE("three hundred idle connections from one peer do not keep its next request out") {
  LocalServerOptions options;
  options.read_timeout = seconds(60);  // far longer than the test: nothing here is a timeout
  ServerFixture f(options);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 300; ++i) {
    idle.push_back(std::make_unique<RawClient>(f.server.port()));
    REQUIRE(idle.back()->Send("GET /hel"));
  }
  // The probe comes from the same address (a kubelet on the node, an attacker with hostNetwork).
  CHECK(BodyOf(HttpGet(f.server.port(), "/hello")) == "hello \n");
  // Accepted in order, so every idle connection was accepted before the probe: all but the
  // newest few were closed to make room.
  size_t closed = 0;
  for (auto& c : idle) closed += c->HeardFromServer() ? 1 : 0;
  CHECK(closed >= 300 - options.limits.max_per_peer);
}

TEST_CASE("one peer's idle connections never evict another peer's connection") {
  LocalServerOptions options;
  options.read_timeout = seconds(60);
  ServerFixture f(options);
  RawClient kubelet(f.server.port(), "127.0.0.1");
  REQUIRE(kubelet.Send("GET /hello?who=kubelet HTTP/1.1\r\n"));  // half its request, then the attack
  std::vector<std::unique_ptr<RawClient>> attacker;
  for (int i = 0; i < 300; ++i) {
    attacker.push_back(std::make_unique<RawClient>(f.server.port(), "127.0.0.1", "127.0.0.2"));
    REQUIRE(attacker.back()->connected());
    REQUIRE(attacker.back()->Send("GET /hel"));
  }
  REQUIRE(kubelet.Send("\r\n"));
  CHECK(BodyOf(kubelet.ReadUntilClosed()) == "hello who=kubelet\n");
}

TEST_CASE("a slowloris client that keeps trickling bytes gets 408 at its deadline counted from accept") {
  FakeClock clock;
  LocalServerOptions options;
  options.read_timeout = milliseconds(2000);
  options.clock = &clock;
  ServerFixture f(options);
  RawClient slow(f.server.port());
  REQUIRE(slow.Send("G"));
  // Once a later connection was served, the slow one (earlier in the accept queue) was accepted.
  REQUIRE(BodyOf(HttpGet(f.server.port(), "/hello")) == "hello \n");
  for (const char* more : {"E", "T", " ", "/"}) {
    clock.Advance(milliseconds(499));
    REQUIRE(slow.Send(more));
    f.server.Poke();
  }
  // 1996 ms after accept: still waiting. A request served after the clock moved proves the loop
  // looked at its deadlines with the new time.
  REQUIRE(BodyOf(HttpGet(f.server.port(), "/hello")) == "hello \n");
  CHECK_FALSE(slow.HeardFromServer());
  clock.Advance(milliseconds(4));
  f.server.Poke();
  CHECK(slow.ReadUntilClosed().rfind("HTTP/1.1 408 ", 0) == 0);
}

TEST_CASE("Stop returns promptly while a client holds a connection open") {
  LocalServerOptions options;
  options.read_timeout = seconds(60);
  auto f = std::make_unique<ServerFixture>(options);
  RawClient idle(f->server.port());
  idle.Send("GET /hel");
  REQUIRE(BodyOf(HttpGet(f->server.port(), "/hello")) == "hello \n");  // the loop is running
  auto start = std::chrono::steady_clock::now();
  f->server.Stop();
  CHECK(std::chrono::steady_clock::now() - start < seconds(1));
  CHECK(idle.ReadUntilClosed(seconds(5)).empty());
  CHECK(idle.closed_by_server());
  f->server.Stop();  // idempotent
}

TEST_CASE("a port in use is reported as unavailable, a bad address as invalid") {
  ServerFixture f;
  LocalServerOptions same;
  same.port = f.server.port();
  LocalServer clash(same);
  Status taken = clash.Start();
  CHECK(taken.code() == StatusCode::kUnavailable);
  CHECK_THAT(taken.message(), Catch::Contains("127.0.0.1:" + std::to_string(f.server.port())));
  LocalServerOptions bad;
  bad.bind_address = "nodehook.invalid";  // RFC 6761: never resolves
  LocalServer wrong(bad);
  CHECK(wrong.Start().code() == StatusCode::kInvalid);
}

}  // namespace
}  // namespace nodehook
