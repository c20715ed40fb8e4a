#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "agent/watch/watcher.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

KubeObject Obj(const std::string& uid, const std::string& rv) {
  KubeObject o;
  o.meta = {uid, "ns", "n-" + uid, rv, false};
  o.json = "{}";
  return o;
}

ObjectList ListOf(std::vector<KubeObject> items, const std::string& rv) {
  ObjectList l;
  l.items = std::move(items);
  l.resource_version = rv;
  return l;
}

WatchEvent Event(WatchEventType type, const std::string& uid, const std::string& rv) {
  WatchEvent e;
  e.type = type;
  e.object = Obj(uid, rv);
  return e;
}

WatchEvent Expired() {
  WatchEvent e;
  e.type = WatchEventType::kError;
  e.error_code = 410;
  e.error_message = "too old resource version";
  return e;
}

struct RecordingSink : WatchSink {
  std::mutex mu;
  std::vector<std::string> log;
  void OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) override {
    std::lock_guard<std::mutex> l(mu);
    log.push_back("listed " + std::to_string(items.size()));
    for (const auto& bad : quarantined) log.push_back("listed bad " + bad.meta.uid);
  }
  void OnQuarantined(const BadObject& bad, WatchEventType type) override {
    std::lock_guard<std::mutex> l(mu);
    log.push_back(std::string("quarantined ") + WatchEventTypeName(type) + " " + bad.meta.uid);
  }
  void OnObject(ObjectPtr o) override {
    std::lock_guard<std::mutex> l(mu);
    log.push_back("object " + o->meta.uid + "@" + o->meta.resource_version);
  }
  void OnDeleted(ObjectPtr o) override {
    std::lock_guard<std::mutex> l(mu);
    log.push_back("deleted " + o->meta.uid);
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> l(mu);
    return log;
  }
};

struct Fixture {
  FakeClock clock;
  FakeKubeClient client;
  RecordingSink sink;
  CancelToken stop;
  WatcherOptions options = [] {
    WatcherOptions o;
    o.seed = 42;
    o.watch_timeout_seconds = 123;
    return o;
  }();
  Watcher watcher{client, ResourceRef{"example.com", "v1", "widgets", "", ""}, sink, clock, options};
  std::thread thread;

  void Start() {
    thread = std::thread([this] { watcher.Run(stop); });
  }
  // Blocks until the watcher waits on the clock (a backoff).
  void WaitForBackoff() {
    while (clock.waiters() == 0) std::this_thread::yield();
  }
  // Started with a list the server refuses (the next one answers at "10"); returns once the
  // watcher waits its backoff.
  void StartWithRefusedList() {
    client.QueueList(Status(StatusCode::kUnavailable, "connection refused"));
    client.QueueList(ListOf({}, "10"));
    Start();
    client.WaitForListCalls(1);
    WaitForBackoff();
  }
  ~Fixture() {
    stop.Cancel();
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

TEST_CASE("watcher lists, then watches from the list's resourceVersion with bookmarks and a timeout") {
  Fixture f;
  f.client.QueueList(ListOf({Obj("a", "5")}, "10"));
  f.Start();
  f.client.WaitForWatchCalls(1);
  auto calls = f.client.watch_calls();
  REQUIRE(calls[0].resource_version == "10");
  REQUIRE(calls[0].allow_bookmarks);
  REQUIRE(calls[0].timeout_seconds >= 123);
  REQUIRE(calls[0].timeout_seconds < 246);
  REQUIRE(f.sink.Log() == std::vector<std::string>{"listed 1"});
  REQUIRE(f.watcher.synced());
}

TEST_CASE("a clean end of the stream watches again from the last event's or bookmark's resourceVersion") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  WatchEvent bookmark;
  bookmark.type = WatchEventType::kBookmark;
  bookmark.object.meta.resource_version = "20";
  f.client.QueueWatch({{Event(WatchEventType::kAdded, "a", "11"), Event(WatchEventType::kDeleted, "a", "12")},
                       Status::Ok()});
  f.client.QueueWatch({{bookmark}, Status::Ok()});
  f.Start();
  f.client.WaitForWatchCalls(3);
  auto calls = f.client.watch_calls();
  REQUIRE(calls[1].resource_version == "12");
  REQUIRE(calls[2].resource_version == "20");
  REQUIRE(f.client.list_call_count() == 1);
  REQUIRE(f.sink.Log() == std::vector<std::string>{"listed 0", "object a@11", "deleted a"});
}

TEST_CASE("an expired resourceVersion in the stream leads to a full relist") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  f.client.QueueList(ListOf({Obj("b", "30")}, "31"));
  f.client.QueueWatch({{Expired()}, Status::Ok()});
  f.Start();
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.client.list_call_count() == 2);
  REQUIRE(f.client.watch_calls()[1].resource_version == "31");
}

TEST_CASE("an HTTP 410 on watch leads to a full relist") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  f.client.QueueList(ListOf({}, "40"));
  f.client.QueueWatch({{}, Status(StatusCode::kGone, "410")});
  f.Start();
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.client.watch_calls()[1].resource_version == "40");
}

TEST_CASE("a failed list waits a jittered backoff on the injected clock, then lists again") {
  Fixture f;
  f.StartWithRefusedList();
  REQUIRE(f.client.list_call_count() == 1);
  f.clock.Advance(Duration(800));  // the first backoff is at most 0.8 s
  f.client.WaitForWatchCalls(1);
  REQUIRE(f.client.list_call_count() == 2);
  REQUIRE(f.watcher.synced());
}

TEST_CASE("a watch error keeps the resourceVersion and watches again after the backoff") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  f.client.QueueWatch({{Event(WatchEventType::kModified, "a", "15")}, Status(StatusCode::kUnavailable, "reset")});
  f.Start();
  f.client.WaitForWatchCalls(1);
  f.WaitForBackoff();
  f.clock.Advance(Duration(800));
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.client.watch_calls()[1].resource_version == "15");
  REQUIRE(f.client.list_call_count() == 1);
}

TEST_CASE("backoff grows to its cap and jitters within it") {
  FakeClock clock;
  Backoff b(BackoffPolicy{}, clock, 7);
  std::vector<int64_t> caps;
  for (int i = 0; i < 8; ++i) {
    caps.push_back(b.CurrentCap().count());
    Duration d = b.Next();
    REQUIRE(d.count() >= 0);
    REQUIRE(d.count() <= caps.back());
  }
  REQUIRE(caps == std::vector<int64_t>{800, 1600, 3200, 6400, 12800, 25600, 30000, 30000});
  clock.Advance(Duration(120'000));
  b.Next();
  REQUIRE(b.CurrentCap().count() == 1600);  // started again from the first step
}

TEST_CASE("each watch asks for a random server-side timeout between the base and twice the base") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  for (int i = 0; i < 20; ++i) f.client.QueueWatch({{Event(WatchEventType::kAdded, "a", "11")}, Status::Ok()});
  f.Start();
  f.client.WaitForWatchCalls(21);
  std::set<int> seen;
  for (const auto& call : f.client.watch_calls()) {
    REQUIRE(call.timeout_seconds >= 123);
    REQUIRE(call.timeout_seconds < 246);
    seen.insert(call.timeout_seconds);
  }
  REQUIRE(seen.size() > 5);  // jittered, not one fixed value
}

TEST_CASE("a periodic resync relists even while the watch is healthy") {
  Fixture f;
  f.options.resync_interval = Duration(60'000);
  Watcher watcher(f.client, ResourceRef{"example.com", "v1", "widgets", "", ""}, f.sink, f.clock, f.options);
  f.client.QueueList(ListOf({Obj("a", "5")}, "10"));
  f.client.QueueList(ListOf({Obj("a", "5")}, "20"));
  std::thread t([&] { watcher.Run(f.stop); });
  f.client.WaitForWatchCalls(1);
  REQUIRE(f.client.watch_calls()[0].timeout_seconds <= 60);  // the watch ends by the time the resync is due
  f.clock.Advance(Duration(60'000));
  f.client.QueueWatch({{}, Status::Ok()});  // the server ends the watch at its timeout
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.client.list_call_count() == 2);
  REQUIRE(f.client.watch_calls()[1].resource_version == "20");
  f.stop.Cancel();
  t.join();
}

TEST_CASE("activity and failures are tracked for the health endpoint") {
  Fixture f;
  f.StartWithRefusedList();
  REQUIRE(f.watcher.consecutive_failures() == 1);
  f.clock.Advance(Duration(800));
  f.client.WaitForWatchCalls(1);
  REQUIRE(f.watcher.consecutive_failures() == 0);
  REQUIRE(f.watcher.last_activity() == f.clock.Now());
}

TEST_CASE("a Retry-After from the server is honoured, with jitter on top so a fleet spreads out") {
  FakeClock clock;
  std::set<int64_t> seen;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Backoff b(BackoffPolicy{}, clock, seed);
    Duration d = b.Jitter(Duration(2500));
    REQUIRE(d >= Duration(0));
    REQUIRE(d <= Duration(2500));
    seen.insert(d.count());
  }
  REQUIRE(seen.size() > 10);
}

TEST_CASE("a 429 with Retry-After waits at least that long before listing again") {
  Fixture f;
  f.client.UseClock(&f.clock);
  f.client.QueueList(Status(StatusCode::kTooManyRequests, "storage is (re)initializing").set_retry_after_seconds(5));
  f.client.QueueList(ListOf({}, "10"));
  f.Start();
  f.client.WaitForListCalls(1);
  f.WaitForBackoff();
  size_t sleeps = f.clock.sleeps();
  f.clock.Advance(Duration(4999));  // a watcher that ignored Retry-After would list now...
  // ...so wait until it either listed or looked at the time and went back to sleep.
  while (f.clock.sleeps() == sleeps && f.client.list_call_count() < 2) std::this_thread::yield();
  f.clock.Advance(Duration(2501));  // 5 s + at most half of it again
  f.client.WaitForWatchCalls(1);
  auto times = f.client.list_times();
  REQUIRE(times.size() == 2);
  REQUIRE(times[1] - times[0] >= Duration(7500));  // it slept through the 4999 ms step
}

namespace {
WatchEvent Poison(WatchEventType type, const std::string& uid, const std::string& rv) {
  WatchEvent e = Event(type, uid, rv);
  e.object.json.clear();
  e.quarantined = BadObject{e.object.meta, "too_deep", "object is nested 10001 levels deep"};
  return e;
}
}  // namespace

TEST_CASE("a poison event between two good events does not restart the watch, and the good ones arrive") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  f.client.QueueWatch({{Event(WatchEventType::kAdded, "a", "11"), Poison(WatchEventType::kAdded, "bad", "12"),
                        Event(WatchEventType::kAdded, "c", "13")},
                       Status::Ok()});
  f.Start();
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.sink.Log() == std::vector<std::string>{"listed 0", "object a@11", "quarantined ADDED bad", "object c@13"});
  REQUIRE(f.client.watch_calls()[1].resource_version == "13");
  REQUIRE(f.client.list_call_count() == 1);
  REQUIRE(f.watcher.consecutive_failures() == 0);
}

TEST_CASE("a relist hands the sink its quarantined objects beside the good ones") {
  Fixture f;
  ObjectList list = ListOf({Obj("a", "5")}, "10");
  list.quarantined.push_back(BadObject{{"bad", "ns", "n-bad", "6", false}, "too_big", "object is 5000000 bytes"});
  f.client.QueueList(list);
  f.Start();
  f.client.WaitForWatchCalls(1);
  REQUIRE(f.sink.Log() == std::vector<std::string>{"listed 1", "listed bad bad"});
  REQUIRE(f.watcher.synced());
}

TEST_CASE("a malformed watch line leads to a relist, never to the same resourceVersion again") {
  Fixture f;
  f.client.QueueList(ListOf({}, "10"));
  f.client.QueueList(ListOf({}, "20"));
  f.client.QueueWatch({{}, InvalidError("watch widgets.example.com/v1: malformed JSON at offset 0")});
  f.Start();
  f.client.WaitForWatchCalls(1);
  f.WaitForBackoff();
  f.clock.Advance(Duration(800));
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.client.list_call_count() == 2);
  REQUIRE(f.client.watch_calls()[1].resource_version == "20");
}

TEST_CASE("a 404 on list says the resource does not exist and asks whether the CRD is installed") {
  Fixture f;
  f.client.QueueList(NotFoundError("list widgets.example.com/v1: HTTP 404: the server could not find the requested resource"));
  f.client.QueueList(ListOf({}, "10"));
  f.Start();
  f.client.WaitForListCalls(1);
  f.WaitForBackoff();
  CHECK_THAT(f.watcher.problem(), Catch::Contains("no widgets in group example.com version v1") &&
                                      Catch::Contains("is the CRD installed"));
  CHECK_FALSE(f.watcher.synced());
  f.clock.Advance(Duration(800));  // still retried with backoff
  f.client.WaitForWatchCalls(1);
  CHECK(f.watcher.problem().empty());
}
