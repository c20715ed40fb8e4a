// KubeEventRecorder: the Event it posts, its rate limit, its queue bound and its error handling.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <regex>

#include "agent/events/kube_event_recorder.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const ResourceRef kWidgets{"example.com", "v1", "widgets", "", ""};

ObjectMeta Meta(const std::string& uid, const std::string& ns = "shop") { return {uid, ns, "w-" + uid, "7", false}; }

struct Fixture {
  FakeClock clock;
  FakeKubeClient client;
  Metrics metrics;
  EventRecorderOptions options = [] {
    EventRecorderOptions o;
    o.node_name = "node-a";
    o.queue_capacity = 3;
    return o;
  }();
  std::unique_ptr<KubeEventRecorder> recorder;

  KubeEventRecorder& Recorder() {
    if (!recorder) recorder = std::make_unique<KubeEventRecorder>(client, clock, options, metrics);
    return *recorder;
  }
  uint64_t Posted() { return metrics.GetCounter("events_posted_total", "").value(); }
  uint64_t Dropped(const std::string& reason) {
    return metrics.GetCounter("events_dropped_total", "", {{"reason", reason}}).value();
  }
  rapidjson::Document Body(size_t i) {
    rapidjson::Document doc;
    doc.Parse(client.create_calls().at(i).body.c_str());
    REQUIRE(doc.IsObject());
    return doc;
  }
};

std::string Str(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "<absent>";
}

}  // namespace

TEST_CASE("a permanent failure posts a Warning events.k8s.io Event about the object from this node") {
  Fixture f;
  KubeObject widget;
  widget.meta = Meta("u1");
  widget.json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-u1"}})";
  f.client.QueueList(ObjectList{{widget}, "7", "", {}});
  f.Recorder().PermanentFailure(kWidgets, Meta("u1"), "create", "exit code 3: disk full");
  f.Recorder().WaitIdle();

  REQUIRE(f.client.create_calls().size() == 1);
  const auto call = f.client.create_calls().at(0);
  CHECK(call.collection.CollectionPath() == "/apis/events.k8s.io/v1/events");
  CHECK(call.namespace_name == "shop");
  rapidjson::Document e = f.Body(0);
  CHECK(Str(e, "apiVersion") == "events.k8s.io/v1");
  CHECK(Str(e, "kind") == "Event");
  CHECK(std::regex_match(Str(e["metadata"], "name"), std::regex(R"(w-u1\.[0-9a-f]{16})")));
  CHECK(Str(e["metadata"], "namespace") == "shop");
  CHECK(Str(e, "type") == "Warning");
  CHECK(Str(e, "reason") == "HandlerFailed");
  CHECK(Str(e, "action") == "create");
  CHECK(Str(e, "note") == "create hook failed on node node-a: exit code 3: disk full");
  CHECK(Str(e, "reportingController") == "nodehook.io/agent");
  CHECK(Str(e, "reportingInstance") == "node-a");
  CHECK(Str(e, "eventTime") == "2023-11-14T22:13:20.000000Z");  // FakeClock's start
  CHECK(Str(e["regarding"], "apiVersion") == "example.com/v1");
  CHECK(Str(e["regarding"], "kind") == "Widget");
  CHECK(Str(e["regarding"], "name") == "w-u1");
  CHECK(Str(e["regarding"], "namespace") == "shop");
  CHECK(Str(e["regarding"], "uid") == "u1");
  CHECK(f.Posted() == 1);
}

TEST_CASE("a success posts a Normal Event; the kind is looked up once per resource") {
  Fixture f;
  KubeObject widget;
  widget.meta = Meta("u1");
  widget.json = R"({"kind":"Widget","metadata":{"name":"w-u1"}})";
  f.client.QueueList(ObjectList{{widget}, "7", "", {}});
  f.Recorder().Succeeded(kWidgets, Meta("u1"), "update");
  f.Recorder().Succeeded(kWidgets, Meta("u2"), "update");  // no list left in the fake: the cached kind is used
  f.Recorder().WaitIdle();
  REQUIRE(f.client.create_calls().size() == 2);
  CHECK(Str(f.Body(0), "type") == "Normal");
  CHECK(Str(f.Body(0), "reason") == "HandlerSucceeded");
  CHECK(Str(f.Body(0), "note") == "update hook succeeded on node node-a");
  CHECK(Str(f.Body(1)["regarding"], "kind") == "Widget");
  CHECK(f.client.list_call_count() == 1);
}

TEST_CASE("the kind is learned by listing just that object and never by a get the least-privilege role lacks") {
  Fixture f;
  KubeObject widget;
  widget.meta = Meta("u1");
  widget.json = R"({"kind":"Widget","metadata":{"name":"w-u1"}})";
  f.client.PutObject(widget);  // a get would find it
  f.client.QueueList(ObjectList{{widget}, "7", "", {}});
  f.Recorder().PermanentFailure(kWidgets, Meta("u1"), "create", "boom");
  f.Recorder().WaitIdle();
  CHECK(f.client.get_call_count() == 0);
  REQUIRE(f.client.list_resources().size() == 1);
  CHECK(f.client.list_resources()[0].namespace_name == "shop");
  CHECK(f.client.list_resources()[0].field_selector == "metadata.name=w-u1");
  CHECK(Str(f.Body(0)["regarding"], "kind") == "Widget");
}

TEST_CASE("an Event on this node's Node is posted with kind Node without reading Nodes") {
  Fixture f;
  f.Recorder().PermanentFailure(ResourceRef{"", "v1", "nodes", "", ""}, ObjectMeta{"", "", "node-a", "", false},
                                "state", "state file damaged");
  f.Recorder().WaitIdle();
  CHECK(f.client.get_call_count() == 0);
  CHECK(f.client.list_call_count() == 0);
  REQUIRE(f.client.create_calls().size() == 1);
  CHECK(Str(f.Body(0)["regarding"], "kind") == "Node");
}

TEST_CASE("an Event about the node's state file carries its own reason and note, not a hook's") {
  Fixture f;
  const ResourceRef nodes{"", "v1", "nodes", "", ""};
  const ObjectMeta node{"", "", "node-a", "", false};
  f.Recorder().Report(nodes, node, "state", "StateRecovered", true,
                      "state file /s/state.db was damaged (file is not a database); moved to /s/state.db.corrupt-1");
  f.Recorder().Report(nodes, node, "state", "StateWritesRecovered", false, "state file /s/state.db takes writes again");
  f.Recorder().WaitIdle();
  REQUIRE(f.client.create_calls().size() == 2);
  rapidjson::Document recovered = f.Body(0);
  CHECK(Str(recovered, "reason") == "StateRecovered");
  CHECK(Str(recovered, "type") == "Warning");
  CHECK(Str(recovered, "action") == "state");
  CHECK(Str(recovered, "note") ==
        "state file /s/state.db was damaged (file is not a database); moved to /s/state.db.corrupt-1");
  CHECK(Str(recovered["regarding"], "kind") == "Node");
  CHECK(Str(f.Body(1), "reason") == "StateWritesRecovered");
  CHECK(Str(f.Body(1), "type") == "Normal");
}

TEST_CASE("an object that cannot be read is still reported, without a kind") {
  Fixture f;
  f.Recorder().PermanentFailure(kWidgets, Meta("gone"), "delete", "boom");
  f.Recorder().WaitIdle();
  REQUIRE(f.client.create_calls().size() == 1);
  CHECK(Str(f.Body(0)["regarding"], "kind") == "<absent>");
  CHECK(Str(f.Body(0)["regarding"], "uid") == "gone");
}

TEST_CASE("events about cluster-scoped objects go to the default namespace and regard no namespace") {
  EventSpec spec{"n1.1", ResourceRef{"", "v1", "nodes", "", ""}, Meta("n1", ""), "Node", "create", true, "x",
                 FromMillis(0)};
  rapidjson::Document e;
  e.Parse(EventBody(spec, "node-a").c_str());
  CHECK(Str(e["metadata"], "namespace") == "default");
  CHECK(Str(e["regarding"], "namespace") == "<absent>");
  CHECK(Str(e["regarding"], "apiVersion") == "v1");
}

TEST_CASE("long notes, handlers and node names are cut to the API server's limits, whole characters only") {
  std::string note = std::string(1022, 'a') + "\xC3\xA9\xC3\xA9";  // 1026 bytes ending in two 'é'
  EventSpec spec{"w.1", kWidgets, Meta("u1"), "Widget", std::string(200, 'h'), true, note, FromMillis(0)};
  rapidjson::Document e;
  e.Parse(EventBody(spec, std::string(300, 'n')).c_str());
  std::string cut = Str(e, "note");
  CHECK(cut.size() <= 1024);
  CHECK(cut == std::string(1021, 'a') + "...");
  CHECK(Str(e, "action").size() == 128);
  CHECK(Str(e, "reportingInstance").size() == 128);
}

TEST_CASE("event names are the object's name and a unique hex suffix, within DNS subdomain limits") {
  CHECK(EventName("w-u1", 0x1f) == "w-u1.1f");
  std::string long_name = std::string(235, 'a') + "-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
  std::string cut = EventName(long_name, 0x123456789abcdef0);
  CHECK(cut.size() <= 253);
  // Cut before "-b...", and the dangling '-' dropped.
  CHECK(cut == std::string(235, 'a') + ".123456789abcdef0");
}

TEST_CASE("a name clash with another Event is retried once under a new name") {
  Fixture f;
  f.client.QueueCreateResult(Status(StatusCode::kConflict, "already exists"));
  f.Recorder().PermanentFailure(kWidgets, Meta("u1"), "create", "x");
  f.Recorder().WaitIdle();
  REQUIRE(f.client.create_calls().size() == 2);
  CHECK(Str(f.Body(0)["metadata"], "name") != Str(f.Body(1)["metadata"], "name"));
  CHECK(f.Posted() == 1);
}

TEST_CASE("one Event per object, handler and type per interval; other handlers and later outcomes still report") {
  Fixture f;
  f.options.min_interval = std::chrono::minutes(5);
  f.options.queue_capacity = 10;
  KubeEventRecorder& r = f.Recorder();
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "first");
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "again");  // same key: suppressed
  r.PermanentFailure(kWidgets, Meta("u1"), "delete", "other handler");
  r.Succeeded(kWidgets, Meta("u1"), "create");  // a success is not hidden by a failure
  r.PermanentFailure(kWidgets, Meta("u2"), "create", "other object");
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 4);
  CHECK(f.Dropped("rate_limited") == 1);

  f.clock.Advance(std::chrono::minutes(4));
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "still within the interval");
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 4);
  f.clock.Advance(std::chrono::minutes(1));
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "after the interval");
  r.WaitIdle();
  REQUIRE(f.client.create_calls().size() == 5);
  CHECK(Str(f.Body(4), "note").find("after the interval") != std::string::npos);
  CHECK(f.Dropped("rate_limited") == 2);
}

TEST_CASE("the rate limiter remembers a bounded number of keys, forgetting the oldest first") {
  Fixture f;
  f.options.max_remembered = 2;
  f.options.queue_capacity = 10;
  KubeEventRecorder& r = f.Recorder();
  for (const char* uid : {"a", "b", "c"}) r.PermanentFailure(kWidgets, Meta(uid), "create", "x");
  r.PermanentFailure(kWidgets, Meta("c"), "create", "x");  // remembered: suppressed
  r.PermanentFailure(kWidgets, Meta("a"), "create", "x");  // forgotten: posted again
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 4);
  CHECK(f.Dropped("rate_limited") == 1);
}

TEST_CASE("a slow API server never blocks the caller: beyond the queue bound events are dropped and counted") {
  Fixture f;
  f.client.HoldCreates(true);
  KubeEventRecorder& r = f.Recorder();
  r.PermanentFailure(kWidgets, Meta("busy"), "create", "x");
  f.client.WaitForCreateCalls(1);  // the poster is stuck in the API call
  for (const char* uid : {"q1", "q2", "q3", "q4", "q5"}) r.PermanentFailure(kWidgets, Meta(uid), "create", "x");
  CHECK(f.Dropped("queue_full") == 2);
  r.PermanentFailure(kWidgets, Meta("q4"), "create", "x");  // dropped, so not rate-limited later
  f.client.HoldCreates(false);
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 4);
  CHECK(f.Posted() == 4);
  r.PermanentFailure(kWidgets, Meta("q4"), "create", "x");
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 5);
}

TEST_CASE("a refused post is counted and does not stop later events") {
  Fixture f;
  f.client.QueueCreateResult(Status(StatusCode::kForbidden, "events.events.k8s.io is forbidden"));
  KubeEventRecorder& r = f.Recorder();
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "x");
  r.PermanentFailure(kWidgets, Meta("u2"), "create", "x");
  r.WaitIdle();
  CHECK(f.client.create_calls().size() == 2);
  CHECK(f.Dropped("post_failed") == 1);
  CHECK(f.Posted() == 1);
}

TEST_CASE("a failing handler posts HandlerFailing on failures 1, 2, 4 and 8 only, naming node, attempt and output") {
  Fixture f;
  f.options.min_interval = Duration(0);  // only the aggregation is under test here
  f.options.queue_capacity = 20;
  KubeEventRecorder& r = f.Recorder();
  for (int attempt = 1; attempt <= 10; ++attempt) {
    r.Failing(kWidgets, Meta("u1"), "create", attempt, "exited 1: no such file /etc/x");
  }
  r.WaitIdle();
  REQUIRE(f.client.create_calls().size() == 4);
  CHECK(f.Dropped("aggregated") == 6);
  rapidjson::Document first = f.Body(0);
  CHECK(Str(first, "type") == "Warning");
  CHECK(Str(first, "reason") == "HandlerFailing");
  CHECK(Str(first, "action") == "create");
  CHECK(Str(first, "reportingInstance") == "node-a");
  CHECK(Str(first, "note") ==
        "create hook failing on node node-a (attempt 1, reported on attempts 1, 2, 4, 8, ...; retrying): "
        "exited 1: no such file /etc/x");
  CHECK_THAT(Str(f.Body(3), "note"), Catch::Contains("(attempt 8,"));
}

TEST_CASE("HandlerFailing Events are rate-limited per object and handler but never hide a permanent failure") {
  Fixture f;
  f.options.min_interval = std::chrono::minutes(5);
  f.options.queue_capacity = 10;
  KubeEventRecorder& r = f.Recorder();
  r.Failing(kWidgets, Meta("u1"), "create", 1, "boom");
  r.Failing(kWidgets, Meta("u1"), "create", 2, "boom");  // within the interval: suppressed
  r.PermanentFailure(kWidgets, Meta("u1"), "create", "boom");
  r.WaitIdle();
  REQUIRE(f.client.create_calls().size() == 2);
  CHECK(Str(f.Body(1), "reason") == "HandlerFailed");
  CHECK(f.Dropped("rate_limited") == 1);
}

TEST_CASE("a recovery posts a Normal HandlerRecovered Event with the number of failures") {
  Fixture f;
  KubeEventRecorder& r = f.Recorder();
  r.Failing(kWidgets, Meta("u1"), "update", 1, "boom");
  r.Recovered(kWidgets, Meta("u1"), "update", 3);
  r.WaitIdle();
  REQUIRE(f.client.create_calls().size() == 2);
  rapidjson::Document e = f.Body(1);
  CHECK(Str(e, "type") == "Normal");
  CHECK(Str(e, "reason") == "HandlerRecovered");
  CHECK(Str(e, "action") == "update");
  CHECK(Str(e, "note") == "update hook succeeded on node node-a after 3 failed attempts");
}

TEST_CASE("a hook's output in a note is one line, control characters escaped, its end kept") {
  CHECK(NoteText("exited 1: \x1b[2Jgone\nsecond line\ttab") == "exited 1: \\x1b[2Jgone second line tab");
  std::string longer = "exited 1: " + std::string(1000, 'x') + " the real error";
  std::string note = NoteText(longer, 100);
  CHECK(note.size() <= 110);
  CHECK_THAT(note, Catch::StartsWith("exited 1: "));
  CHECK_THAT(note, Catch::EndsWith("the real error"));
}

TEST_CASE("failures 1, 2, 4, 8, ... are the ones reported") {
  std::vector<int> reported;
  for (int attempt = 0; attempt <= 70; ++attempt) {
    if (ReportsFailure(attempt)) reported.push_back(attempt);
  }
  CHECK(reported == std::vector<int>{1, 2, 4, 8, 16, 32, 64});
}
