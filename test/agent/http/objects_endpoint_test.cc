// GET /v1/objects: what a node tells about its objects, bounded, filtered, and never more than
// `nodehook state list --json` would.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include <map>
#include <memory>

#include "agent/http/objects_endpoint.h"
#include "test/agent/http/raw_client.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

HandlerRecord Handler(const std::string& name, const std::string& outcome, int retries, const std::string& message) {
  HandlerRecord h;
  h.handler = name;
  h.last_outcome = outcome;
  h.retries = retries;
  h.last_message = message;
  h.last_object = R"({"spec":{"password":"object body"}})";
  return h;
}

SnapshotObject Object(const std::string& ns, const std::string& name, std::vector<HandlerRecord> handlers = {}) {
  SnapshotObject o;
  o.uid = CompactUid("uid-" + name);
  o.resource = "widgets.example.com/v1";
  o.key = SnapshotObject::KeyOf(ns, name);
  o.handled_at_ms = 1000;
  o.handlers = SnapshotHandlers(std::move(handlers));
  return o;
}

struct Endpoint {
  FakeClock clock;
  ObjectViewsPtr snapshot;
  LocalServer server{LocalServerOptions{}};

  // `settled`: the settled resourceVersion by uid, as the agent's caches would say it.
  explicit Endpoint(std::vector<SnapshotObject> objects, ObjectsEndpointOptions options = {},
                    std::map<std::string, std::string> settled = {}) {
    auto s = std::make_shared<ObjectViewsSnapshot>();
    s->node = "node-a";
    s->taken_at = clock.Now();
    for (SnapshotObject& o : objects) s->objects.push_back(std::make_shared<const SnapshotObject>(std::move(o)));
    s->settled_version = [settled = std::move(settled)](std::string_view resource, const std::string& uid) {
      CHECK(resource == "widgets.example.com/v1");
      return settled.count(uid) ? settled.at(uid) : "";
    };
    snapshot = s;
    RegisterObjectsEndpoints(server, [this]() -> Result<ObjectViewsPtr> { return snapshot; }, clock, options);
    REQUIRE(server.Start().ok());
  }

  // The answer's JSON; `status` is checked first. Held behind a pointer: returning a
  // rapidjson::Document by value trips clang-analyzer's use-after-free false positive in stack.h.
  struct Answer {
    std::shared_ptr<rapidjson::Document> doc = std::make_shared<rapidjson::Document>();
    const rapidjson::Value& operator[](const char* key) const { return (*doc)[key]; }
  };
  Answer Get(const std::string& target, int status = 200) {
    std::string response = HttpGet(server.port(), target);
    REQUIRE(StatusOf(response) == status);
    Answer answer;
    std::string body = BodyOf(response);
    REQUIRE_FALSE(answer.doc->Parse(body.c_str()).HasParseError());
    return answer;
  }
};

std::vector<std::string> Names(const Endpoint::Answer& doc) {
  std::vector<std::string> names;
  for (const auto& o : doc["objects"].GetArray()) names.emplace_back(o["name"].GetString());
  return names;
}

TEST_CASE("GET /v1/objects lists every object with its handlers' outcome, retries and next attempt") {
  Endpoint e({Object("ns", "a"), Object("ns", "b", {Handler("update", "failed", 3, "exit 1: no disk")})});
  auto doc = e.Get("/v1/objects");
  CHECK(std::string(doc["node"].GetString()) == "node-a");
  CHECK(doc["total"].GetInt() == 2);
  CHECK_FALSE(doc["truncated"].GetBool());
  CHECK(Names(doc) == std::vector<std::string>{"a", "b"});
  const auto& handler = doc["objects"][1]["handlers"][0];
  CHECK(std::string(handler["outcome"].GetString()) == "failed");
  CHECK(handler["retries"].GetInt() == 3);
  CHECK(handler.HasMember("next_attempt_ms"));
  CHECK(std::string(handler["last_message"].GetString()) == "exit 1: no disk");
}

TEST_CASE("the answer never carries an object's stored body") {
  Endpoint e({Object("ns", "b", {Handler("update", "failed", 1, "m")})});
  std::string body = BodyOf(HttpGet(e.server.port(), "/v1/objects"));
  CHECK(body.find("object body") == std::string::npos);
  CHECK(body.find("essence") == std::string::npos);
}

TEST_CASE("a limit returns the first objects and marks the answer truncated with the total") {
  Endpoint e({Object("ns", "a"), Object("ns", "b"), Object("ns", "c")});
  auto doc = e.Get("/v1/objects?limit=2");
  CHECK(Names(doc) == std::vector<std::string>{"a", "b"});
  CHECK(doc["total"].GetInt() == 3);
  CHECK(doc["truncated"].GetBool());
}

TEST_CASE("without a limit at most default_limit objects are sent") {
  std::vector<SnapshotObject> many;
  for (int i = 0; i < 12; ++i) many.push_back(Object("ns", "o" + std::to_string(100 + i)));
  ObjectsEndpointOptions options;
  options.default_limit = 10;
  Endpoint e(many, options);
  auto doc = e.Get("/v1/objects");
  CHECK(doc["objects"].Size() == 10);
  CHECK(doc["truncated"].GetBool());
}

TEST_CASE("failing=true keeps only failing handlers and the objects that have one") {
  Endpoint e({Object("ns", "ok"),
              Object("ns", "mixed", {Handler("create", "in_progress", 0, "detaching"), Handler("update", "failed", 2, "x")}),
              Object("ns", "retrying", {Handler("update", "running", 4, "")}),
              Object("ns", "given-up", {Handler("delete", "permanent_failure", 5, "gone")}),
              Object("ns", "busy", {Handler("create", "running", 0, "")})});
  auto doc = e.Get("/v1/objects?failing=true");
  CHECK(Names(doc) == std::vector<std::string>{"mixed", "retrying", "given-up"});
  CHECK(doc["objects"][0]["handlers"].Size() == 1);
  CHECK(std::string(doc["objects"][0]["handlers"][0]["handler"].GetString()) == "update");
  CHECK(doc["total"].GetInt() == 3);
}

TEST_CASE("GET /v1/objects/NS/NAME and ?uid= answer one object; an unknown one is 404") {
  Endpoint e({Object("ns", "a"), Object("other", "a"), Object("", "cluster-wide")});
  CHECK(Names(e.Get("/v1/objects/ns/a")) == std::vector<std::string>{"a"});
  CHECK(std::string(e.Get("/v1/objects/other/a")["objects"][0]["namespace"].GetString()) == "other");
  CHECK(Names(e.Get("/v1/objects/cluster-wide")) == std::vector<std::string>{"cluster-wide"});
  CHECK(Names(e.Get("/v1/objects?uid=uid-cluster-wide")) == std::vector<std::string>{"cluster-wide"});
  auto missing = e.Get("/v1/objects/ns/nope", 404);
  CHECK(std::string(missing["error"].GetString()) == "node node-a knows no such object");
  e.Get("/v1/objects/a/b/c", 400);
}

TEST_CASE("with messages hidden, hook output is left out and the answer says so") {
  ObjectsEndpointOptions options;
  options.show_messages = false;
  Endpoint e({Object("ns", "b", {Handler("update", "failed", 1, "token=hunter2")})}, options);
  std::string body = BodyOf(HttpGet(e.server.port(), "/v1/objects"));
  CHECK(body.find("hunter2") == std::string::npos);
  CHECK(body.find(R"("messages":"hidden")") != std::string::npos);
}

TEST_CASE("a long message is cut at message_bytes on a character boundary") {
  ObjectsEndpointOptions options;
  options.message_bytes = 10;
  Endpoint e({Object("ns", "b", {Handler("update", "failed", 1, "123456789\xC3\xA9 and more")})}, options);
  auto doc = e.Get("/v1/objects");
  CHECK(std::string(doc["objects"][0]["handlers"][0]["last_message"].GetString()) == "123456789 [cut]");
}

TEST_CASE("a malformed limit or failing value is refused naming the parameter") {
  Endpoint e({Object("ns", "a")});
  CHECK(std::string(e.Get("/v1/objects?limit=0", 400)["error"].GetString()) ==
        "limit: expected a number from 1 to 5000, got \"0\"");
  e.Get("/v1/objects?limit=5001", 400);
  e.Get("/v1/objects?limit=ten", 400);
  CHECK(std::string(e.Get("/v1/objects?failing=yes", 400)["error"].GetString()) ==
        "failing: expected true or false, got \"yes\"");
}

TEST_CASE("before the first snapshot the endpoint answers 503 with the reason") {
  FakeClock clock;
  LocalServer server{LocalServerOptions{}};
  RegisterObjectsEndpoints(
      server, []() -> Result<ObjectViewsPtr> { return UnavailableError("not running yet: state lock"); }, clock, {});
  REQUIRE(server.Start().ok());
  std::string response = HttpGet(server.port(), "/v1/objects");
  CHECK(StatusOf(response) == 503);
  CHECK(BodyOf(response) == "{\"error\":\"not running yet: state lock\"}\n");
}

TEST_CASE("the answer says how old its snapshot is") {
  Endpoint e({Object("ns", "a")});
  e.clock.Advance(std::chrono::seconds(3));
  CHECK(e.Get("/v1/objects")["snapshot_age_ms"].GetInt() == 3000);
}

TEST_CASE("each object carries the resourceVersion this node settled at, when it has one") {
  Endpoint e({Object("ns", "a"), Object("ns", "b")}, {}, {{"uid-a", "4711"}});
  auto doc = e.Get("/v1/objects?uid=uid-a");
  CHECK(std::string(doc["objects"][0]["settled_resource_version"].GetString()) == "4711");
  CHECK_FALSE(e.Get("/v1/objects?uid=uid-b")["objects"][0].HasMember("settled_resource_version"));
}

}  // namespace
}  // namespace nodehook
