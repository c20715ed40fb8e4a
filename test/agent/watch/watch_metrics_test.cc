#include <catch2/catch.hpp>

#include <thread>

#include "agent/http/health.h"
#include "agent/watch/watcher.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const char* const kWidgets = "{resource=\"widgets.example.com/v1\"";

WatchEvent Added(const std::string& rv) {
  WatchEvent e;
  e.type = WatchEventType::kAdded;
  e.object.meta = {"a", "ns", "a", rv, false};
  e.object.json = "{}";
  return e;
}

ObjectList EmptyList(const std::string& rv) {
  ObjectList l;
  l.resource_version = rv;
  return l;
}

struct NullSink : WatchSink {
  void OnListed(const std::vector<ObjectPtr>&, const std::vector<BadObject>&) override {}
  void OnQuarantined(const BadObject&, WatchEventType) override {}
  void OnObject(ObjectPtr) override {}
  void OnDeleted(ObjectPtr) override {}
};

struct Fixture {
  Metrics metrics;
  FakeClock clock;
  FakeKubeClient client;
  NullSink sink;
  CancelToken stop;
  WatcherOptions options = [this] {
    WatcherOptions o;
    o.seed = 7;
    o.metrics = &metrics;
    return o;
  }();
  Watcher watcher{client, ResourceRef{"example.com", "v1", "widgets", "", ""}, sink, clock, options};
  std::thread thread;

  void Start() {
    thread = std::thread([this] { watcher.Run(stop); });
  }
  bool Shows(const std::string& line) { return metrics.Render().find(line + "\n") != std::string::npos; }
  ~Fixture() {
    stop.Cancel();
    if (thread.joinable()) thread.join();
  }
};

std::string Restarts(const char* cause) {
  return std::string("nodehook_watch_restarts_total{cause=\"") + cause + "\",resource=\"widgets.example.com/v1\"}";
}

}  // namespace

TEST_CASE("watch restarts are counted by cause: timeout, expired and stall, and a relist is counted once") {
  Fixture f;
  f.client.QueueList(EmptyList("10"));
  f.client.QueueList(EmptyList("20"));
  WatchEvent expired;
  expired.type = WatchEventType::kError;
  expired.error_code = 410;
  f.client.QueueWatch({{Added("11")}, Status::Ok()});                                 // the server's timeout
  f.client.QueueWatch({{expired}, Status::Ok()});                                     // 410: relist
  f.client.QueueWatch({{}, Status(StatusCode::kTimeout, "no byte for 90 s")});         // the stall detector
  f.Start();
  f.client.WaitForWatchCalls(4);  // the fourth waits for a script: the first three are counted
  REQUIRE(f.Shows(Restarts("timeout") + " 1"));
  REQUIRE(f.Shows(Restarts("expired") + " 1"));
  REQUIRE(f.Shows(Restarts("stall") + " 1"));
  REQUIRE(f.Shows(Restarts("error") + " 0"));
  REQUIRE(f.Shows(std::string("nodehook_watch_relists_total") + kWidgets + "} 1"));
  REQUIRE(f.Shows(std::string("nodehook_watch_state") + kWidgets + ",state=\"watching\"} 1"));
  REQUIRE(f.Shows(std::string("nodehook_watch_state") + kWidgets + ",state=\"empty\"} 0"));
}

TEST_CASE("a failing watch counts as an error restart and its silence grows on the injected clock") {
  Fixture f;
  f.client.QueueList(EmptyList("10"));
  f.client.QueueWatch({{}, Status(StatusCode::kUnavailable, "connection refused")});
  f.Start();
  f.client.WaitForWatchCalls(1);
  while (f.clock.waiters() == 0) std::this_thread::yield();  // in its backoff, after counting
  REQUIRE(f.Shows(Restarts("error") + " 1"));
  REQUIRE(f.Shows(std::string("nodehook_watch_state") + kWidgets + ",state=\"listed\"} 1"));
  REQUIRE(f.Shows(std::string("nodehook_watch_seconds_since_activity") + kWidgets + "} 0"));
  f.clock.Advance(Duration(30'000));
  f.client.WaitForWatchCalls(2);
  REQUIRE(f.Shows(std::string("nodehook_watch_seconds_since_activity") + kWidgets + "} 30"));
  REQUIRE(f.Shows(std::string("nodehook_watch_relists_total") + kWidgets + "} 0"));
}

TEST_CASE("a resource not served yet (404: no CRD) is waited for alive: each 404 is an answer, shown in a gauge") {
  CapturedLog log;
  Fixture f;
  const TimePoint start = f.clock.Now();
  for (int i = 0; i < 40; ++i) {
    f.client.QueueList(NotFoundError("list widgets.example.com/v1: HTTP 404: the server could not find the resource"));
  }
  f.client.QueueList(EmptyList("10"));
  f.client.UseClock(&f.clock);
  f.Start();
  // Longer than liveness lets a resource be silent while failing (HealthBounds::stale_after).
  size_t sleeps = 0;
  while (f.clock.Now() - start < std::chrono::seconds(200)) {
    if (f.clock.sleeps() > sleeps) {
      sleeps = f.clock.sleeps();
      f.clock.Advance(std::chrono::seconds(5));
    }
    std::this_thread::yield();
  }
  while (f.clock.waiters() == 0) std::this_thread::yield();  // back in its backoff after the last 404
  REQUIRE_FALSE(f.watcher.synced());
  REQUIRE(f.Shows(std::string("nodehook_watch_resource_served") + kWidgets + "} 0"));
  const TimePoint last_list = f.client.list_times().back();
  CHECK(f.watcher.last_activity() == last_list);  // the last 404 counted as the server's answer
  std::vector<WatchHealth> health{{"widgets.example.com/v1", f.watcher.synced(), f.watcher.last_activity(),
                                   f.watcher.consecutive_failures(), "empty"}};
  CHECK(CheckLiveness(health, f.clock.Now(), HealthBounds{}).ok);
  CHECK_FALSE(CheckReadiness(health).ok);
  auto said = [&](const std::string& event) {
    size_t n = 0;
    for (const std::string& line : log.Lines()) n += line.find("event=\"" + event + "\"") != std::string::npos;
    return n;
  };
  CHECK(said("resource not served") == 1);  // once, not at every retry
  CHECK(said("resource served") == 0);

  // The CRD is applied: the next list succeeds.
  while (f.client.list_call_count() <= 40) {
    if (f.clock.sleeps() > sleeps) {
      sleeps = f.clock.sleeps();
      f.clock.Advance(std::chrono::seconds(5));
    }
    std::this_thread::yield();
  }
  f.client.WaitForWatchCalls(1);
  CHECK(f.watcher.synced());
  CHECK(f.Shows(std::string("nodehook_watch_resource_served") + kWidgets + "} 1"));
  CHECK(said("resource served") == 1);
}
