#include "agent/kube/client/rest_kube_client.h"

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/base/log.h"
#include "test/agent/kube/transport/fake_http_transport.h"
#include "test/fakes/captured_log.h"
#include "test/agent/kube/client/kube_test_data.h"

namespace nodehook {
namespace {

struct ClientFixture {
  FakeHttpTransport* transport;
  RestKubeClient client;
  std::vector<WatchEvent> events;
  CancelToken cancel;

  ClientFixture() : ClientFixture(std::make_unique<FakeHttpTransport>()) {}
  explicit ClientFixture(std::unique_ptr<FakeHttpTransport> t)
      : transport(t.get()), client(std::move(t)) {}

  Status Watch(const ResourceRef& r = WidgetsRef(), WatchOptions o = {}) {
    return client.Watch(r, o, [this](WatchEvent e) { events.push_back(std::move(e)); }, cancel);
  }
};

const std::string& Path(const ClientFixture& f, size_t i) { return f.transport->requests().at(i).path_and_query; }

TEST_CASE("list asks for a page with limit and an encoded label selector") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "", WidgetJson("a", "9")));
  ResourceRef r = WidgetsRef();
  r.namespace_name = "ns";
  r.label_selector = "app in (a,b),tier!=db";
  auto list = f.client.List(r, ListOptions{});
  REQUIRE(list.ok());
  CHECK(list->items.at(0).meta.name == "a");
  CHECK(Path(f, 0) ==
        "/apis/example.com/v1/namespaces/ns/widgets?limit=500"
        "&labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb");
  CHECK(f.transport->requests().at(0).method == "GET");
}

TEST_CASE("ListAll follows continue tokens and returns every item with the final resourceVersion") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "tok/1=", WidgetJson("a", "9") + "," + WidgetJson("b", "9")));
  f.transport->PushResponse(200, WidgetListJson("10", "", WidgetJson("c", "9")));
  auto all = ListAll(f.client, WidgetsRef(), 2);
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 3);
  CHECK(all->items[2].meta.name == "c");
  CHECK(all->resource_version == "10");
  CHECK(all->continue_token.empty());
  CHECK(Path(f, 0) == "/apis/example.com/v1/widgets?limit=2");
  CHECK(Path(f, 1) == "/apis/example.com/v1/widgets?limit=2&continue=tok%2F1%3D");
}

TEST_CASE("an expired continue token (HTTP 410) makes ListAll fall back to one list without pages") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "c", WidgetJson("a", "9")));
  f.transport->PushResponse(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"continue expired"})");
  f.transport->PushResponse(200, WidgetListJson("12", "", WidgetJson("a", "11") + "," + WidgetJson("b", "12")));
  auto all = ListAll(f.client, WidgetsRef());
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 2);  // the whole list once, not page one twice
  CHECK(all->items[0].meta.resource_version == "11");
  CHECK(all->resource_version == "12");
  CHECK(Path(f, 2) == "/apis/example.com/v1/widgets");
}

TEST_CASE("a 410 on the first page, or on the fallback list, ends ListAll with kGone") {
  ClientFixture first;
  first.transport->PushResponse(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"too old"})");
  auto refused = ListAll(first.client, WidgetsRef());
  REQUIRE(refused.status().code() == StatusCode::kGone);
  CHECK(first.transport->requests().size() == 1);

  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "c", WidgetJson("a", "9")));
  f.transport->PushResponse(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"continue expired"})");
  f.transport->PushResponse(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"still expired"})");
  auto all = ListAll(f.client, WidgetsRef());
  REQUIRE(all.status().code() == StatusCode::kGone);
  CHECK_THAT(all.status().message(), Catch::Contains("still expired"));
  CHECK(f.transport->requests().size() == 3);
}

TEST_CASE("watch requests bookmarks, resourceVersion, timeout and the label selector") {
  ClientFixture f;
  f.transport->PushStream({});
  ResourceRef r = WidgetsRef();
  r.group = "";
  r.plural = "nodes";
  r.label_selector = "role=worker";
  WatchOptions o;
  o.resource_version = "123";
  o.timeout_seconds = 290;
  REQUIRE(f.Watch(r, o).ok());
  CHECK(Path(f, 0) ==
        "/api/v1/nodes?watch=1&resourceVersion=123&allowWatchBookmarks=true&timeoutSeconds=290"
        "&labelSelector=role%3Dworker");
}

TEST_CASE("a watch-cache list asks for resourceVersion 0, not older than it, without a limit") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "", WidgetJson("a", "9")));
  ListOptions o;
  o.limit = 0;
  o.resource_version = "0";
  o.resource_version_match = "NotOlderThan";
  REQUIRE(f.client.List(WidgetsRef(), o).ok());
  CHECK(Path(f, 0) == "/apis/example.com/v1/widgets?resourceVersion=0&resourceVersionMatch=NotOlderThan");
}

TEST_CASE("a streaming list is a watch with initial events, bookmarks and NotOlderThan") {
  ClientFixture f;
  f.transport->PushStream({});
  WatchOptions o;
  o.allow_bookmarks = false;  // a streaming list needs them anyway: its end is one
  o.send_initial_events = true;
  o.timeout_seconds = 290;
  REQUIRE(f.Watch(WidgetsRef(), o).ok());
  CHECK(Path(f, 0) ==
        "/apis/example.com/v1/widgets?watch=1&allowWatchBookmarks=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=290");
}

TEST_CASE("list and watch send a field selector, e.g. to follow one Node") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "", ""));
  f.transport->PushStream({});
  ResourceRef nodes{"", "v1", "nodes", "", ""};
  nodes.field_selector = "metadata.name=node-a";
  REQUIRE(f.client.List(nodes, ListOptions{}).ok());
  WatchOptions o;
  o.resource_version = "10";
  o.timeout_seconds = 60;
  REQUIRE(f.Watch(nodes, o).ok());
  CHECK(Path(f, 0) == "/api/v1/nodes?limit=500&fieldSelector=metadata.name%3Dnode-a");
  CHECK(Path(f, 1) ==
        "/api/v1/nodes?watch=1&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=60"
        "&fieldSelector=metadata.name%3Dnode-a");
}

TEST_CASE("watch events split across chunks arrive whole and in order") {
  ClientFixture f;
  std::string body = EventLine("ADDED", WidgetJson("a", "1")) + EventLine("MODIFIED", WidgetJson("a", "2")) +
                     EventLine("BOOKMARK", R"({"kind":"Widget","metadata":{"resourceVersion":"3"}})");
  f.transport->PushStream({body.substr(0, 10), body.substr(10, 100), body.substr(110)});
  REQUIRE(f.Watch().ok());
  REQUIRE(f.events.size() == 3);
  CHECK(f.events[0].type == WatchEventType::kAdded);
  CHECK(f.events[1].object.meta.resource_version == "2");
  CHECK(f.events[2].type == WatchEventType::kBookmark);
  CHECK(f.events[2].object.meta.resource_version == "3");
}

TEST_CASE("an expired resourceVersion sent as an ERROR event is delivered, not turned into an error") {
  ClientFixture f;
  f.transport->PushStream({EventLine("ERROR", ExpiredStatusJson())});
  REQUIRE(f.Watch().ok());
  REQUIRE(f.events.size() == 1);
  CHECK(f.events[0].type == WatchEventType::kError);
  CHECK(f.events[0].error_code == 410);
}

TEST_CASE("HTTP errors map to status codes carrying the server's message") {
  struct Case {
    int http;
    StatusCode code;
  };
  const Case cases[] = {
      {401, StatusCode::kUnauthorized}, {403, StatusCode::kForbidden}, {404, StatusCode::kNotFound},
      {409, StatusCode::kConflict},     {410, StatusCode::kGone},      {415, StatusCode::kInvalid},
      {500, StatusCode::kUnavailable},  {302, StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    INFO("HTTP " << c.http);
    ClientFixture f;
    f.transport->PushResponse(c.http, R"({"kind":"Status","message":"the server says why"})");
    Status st = f.Watch();
    CHECK(st.code() == c.code);
    CHECK_THAT(st.message(), Catch::Contains("HTTP " + std::to_string(c.http)) &&
                                 Catch::Contains("the server says why"));
  }
}

TEST_CASE("429 and 503 carry the server's Retry-After") {
  ClientFixture f;
  f.transport->PushResponse(429, "slow down", 7);
  f.transport->PushResponse(503, "", 3);
  auto first = f.client.List(WidgetsRef(), {});
  CHECK(first.status().code() == StatusCode::kTooManyRequests);
  CHECK(first.status().retry_after_seconds() == 7);
  CHECK_THAT(first.status().message(), Catch::Contains("slow down"));
  auto second = f.client.List(WidgetsRef(), {});
  CHECK(second.status().code() == StatusCode::kUnavailable);
  CHECK(second.status().retry_after_seconds() == 3);
}

TEST_CASE("a garbage watch line is logged, stops the stream and returns kInvalid") {
  std::vector<std::string> log_lines;
  SetLogSink([&](const std::string& line) { log_lines.push_back(line); });
  ClientFixture f;
  f.transport->PushStream({EventLine("ADDED", WidgetJson("a", "1")), "<html>proxy error</html>\n",
                           EventLine("ADDED", WidgetJson("b", "2"))});
  Status st = f.Watch();
  SetLogSink(nullptr);
  CHECK(st.code() == StatusCode::kInvalid);
  CHECK_THAT(st.message(), Catch::Contains("widgets.example.com/v1"));
  REQUIRE(f.events.size() == 1);
  CHECK(f.transport->chunks_delivered() == 2);  // the third chunk was never read
  CHECK_FALSE(f.cancel.cancelled());            // the caller's token is left alone
  REQUIRE(log_lines.size() == 1);
  CHECK_THAT(log_lines[0], Catch::Contains("widgets.example.com/v1") && Catch::Contains("proxy error"));
}

TEST_CASE("a watch cancelled by the caller returns kCancelled") {
  ClientFixture f;
  f.transport->PushStream({EventLine("ADDED", WidgetJson("a", "1")), EventLine("ADDED", WidgetJson("b", "2"))});
  Status st = f.client.Watch(WidgetsRef(), {}, [&](WatchEvent) { f.cancel.Cancel(); }, f.cancel);
  CHECK(st.code() == StatusCode::kCancelled);
  CHECK(f.transport->chunks_delivered() == 1);
}

TEST_CASE("a stream that ends in the middle of an event is unavailable") {
  ClientFixture f;
  std::string line = EventLine("ADDED", WidgetJson("a", "1"));
  f.transport->PushStream({line, line.substr(0, 20)});
  CHECK(f.Watch().code() == StatusCode::kUnavailable);
  CHECK(f.events.size() == 1);
}

TEST_CASE("transport failures pass through unchanged") {
  ClientFixture f;
  ScriptedResponse refused;
  refused.transport_error = UnavailableError("connection refused");
  f.transport->Push(refused);
  CHECK(f.Watch().message() == "connection refused");
}

TEST_CASE("get reads one object from its own path") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetJson("a", "5"));
  f.transport->PushResponse(404, R"({"kind":"Status","code":404,"message":"widgets \"b\" not found"})");
  ObjectRef ref{WidgetsRef(), "ns", "a"};
  auto obj = f.client.Get(ref);
  REQUIRE(obj.ok());
  CHECK(obj->meta.resource_version == "5");
  CHECK(Path(f, 0) == "/apis/example.com/v1/namespaces/ns/widgets/a");
  ref.name = "b";
  auto missing = f.client.Get(ref);
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().message(), Catch::Contains("widgets \"b\" not found"));
}

TEST_CASE("patch sends the body with the content type of its patch kind") {
  ClientFixture f;
  f.transport->PushResponse(200, WidgetJson("a", "6"));
  f.transport->PushResponse(409, R"({"kind":"Status","code":409,"message":"the object has been modified"})");
  ObjectRef ref{WidgetsRef(), "ns", "a"};
  REQUIRE(f.client.Patch(ref, PatchType::kMerge, R"({"metadata":{"finalizers":null}})").ok());
  Status conflict = f.client.Patch(ref, PatchType::kJson, R"([{"op":"test","path":"/x","value":1}])");
  CHECK(conflict.code() == StatusCode::kConflict);
  const auto& merge = f.transport->requests().at(0);
  CHECK(merge.method == "PATCH");
  CHECK(merge.body == R"({"metadata":{"finalizers":null}})");
  auto content_type = [](const HttpRequest& req) {
    for (const auto& [k, v] : req.headers)
      if (k == "Content-Type") return v;
    return std::string();
  };
  CHECK(content_type(merge) == "application/merge-patch+json");
  CHECK(content_type(f.transport->requests().at(1)) == "application/json-patch+json");
}

TEST_CASE("create POSTs the body as JSON to the collection in the given namespace") {
  ClientFixture f;
  f.transport->PushResponse(201, R"({"kind":"Event"})");
  f.transport->PushResponse(403, R"({"kind":"Status","code":403,"message":"events is forbidden"})");
  f.transport->PushResponse(422, R"({"kind":"Status","code":422,"message":"eventTime: Required value"})");
  ResourceRef events{"events.k8s.io", "v1", "events", "", ""};
  REQUIRE(f.client.Create(events, "ns", R"({"kind":"Event"})").ok());
  const HttpRequest& req = f.transport->requests().at(0);
  CHECK(req.method == "POST");
  CHECK(req.path_and_query == "/apis/events.k8s.io/v1/namespaces/ns/events");
  CHECK(req.body == R"({"kind":"Event"})");
  bool json_body = false;
  for (const auto& [k, v] : req.headers) json_body = json_body || (k == "Content-Type" && v == "application/json");
  CHECK(json_body);

  Status forbidden = f.client.Create(events, "ns", "{}");
  CHECK(forbidden.code() == StatusCode::kForbidden);
  CHECK_THAT(forbidden.message(), Catch::Contains("events is forbidden"));
  Status invalid = f.client.Create(events, "ns", "{}");
  CHECK(invalid.code() == StatusCode::kInvalid);
  CHECK_THAT(invalid.message(), Catch::Contains("eventTime: Required value"));
}


TEST_CASE("at debug level every list and watch request is logged with its response code") {
  CapturedLog log;
  ScopedLogLevel debug(LogLevel::kDebug);
  ClientFixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "", WidgetJson("a", "9")));
  f.transport->PushStream({EventLine("ADDED", WidgetJson("a", "10"))});
  f.transport->PushResponse(410, ExpiredStatusJson());
  REQUIRE(f.client.List(WidgetsRef(), ListOptions{}).ok());
  REQUIRE(f.Watch().ok());
  REQUIRE_FALSE(f.Watch().ok());
  CHECK(log.Count(R"(event="list request" resource=widgets.example.com/v1 path="/apis/example.com/v1/widgets?limit=500")") == 1);
  CHECK(log.Count(R"(event="list response" resource=widgets.example.com/v1 code=200)") == 1);
  CHECK(log.Count(R"(event="watch request" resource=widgets.example.com/v1 path="/apis/example.com/v1/widgets?watch=1)") == 2);
  CHECK(log.Count(R"(event="watch response" resource=widgets.example.com/v1 code=200)") == 1);
  CHECK(log.Count(R"(event="watch response" resource=widgets.example.com/v1 code=410)") == 1);
}

}  // namespace
}  // namespace nodehook
