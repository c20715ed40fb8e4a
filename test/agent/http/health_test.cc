#include <catch2/catch.hpp>
#include <mutex>

#include "agent/base/metrics.h"
#include "agent/http/endpoints.h"
#include "agent/http/health.h"
#include "test/agent/http/raw_client.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

using std::chrono::seconds;

const TimePoint kNow = FromMillis(1'700'000'000'000);

WatchHealth Resource(std::string id, seconds silent_for, int failures, bool synced = true) {
  WatchHealth r;
  r.id = std::move(id);
  r.synced = synced;
  r.last_activity = kNow - silent_for;
  r.consecutive_failures = failures;
  r.state = "watching";
  return r;
}

TEST_CASE("a quiet cluster whose bookmarks keep arriving is healthy") {
  // A bookmark 59 s ago; the stall detector reconnected a quiet stream without failures.
  auto report = CheckLiveness({Resource("widgets.example.com/v1", seconds(59), 0)}, kNow, HealthBounds{});
  CHECK(report.ok);
  CHECK(report.http_status() == 200);
  CHECK(report.body == "widgets.example.com/v1 ok: last activity 59s ago (state watching)\n");
}

TEST_CASE("silence alone is not a liveness failure while reconnecting succeeds") {
  auto report = CheckLiveness({Resource("widgets.example.com/v1", seconds(600), 0)}, kNow, HealthBounds{});
  CHECK(report.ok);
  CHECK_THAT(report.body, Catch::Contains("quiet for 600s, but the connection is not failing"));
}

TEST_CASE("failures alone are not a liveness failure while the resource was active recently") {
  auto report = CheckLiveness({Resource("widgets.example.com/v1", seconds(20), 3)}, kNow, HealthBounds{});
  CHECK(report.ok);
  CHECK_THAT(report.body, Catch::Contains("3 failures since"));
}

TEST_CASE("liveness fails when a resource is silent past the bound and reconnects keep failing") {
  std::vector<WatchHealth> resources = {Resource("widgets.example.com/v1", seconds(30), 0),
                                        Resource("gadgets.example.com/v1", seconds(151), 4)};
  resources[1].state = "listing";
  auto report = CheckLiveness(resources, kNow, HealthBounds{});
  CHECK_FALSE(report.ok);
  CHECK(report.http_status() == 503);
  CHECK(report.body ==
        "widgets.example.com/v1 ok: last activity 30s ago (state watching)\n"
        "gadgets.example.com/v1 stale: no activity for 151s and 4 reconnects failed (state listing)\n");
}

TEST_CASE("the staleness bound is configurable and exclusive") {
  HealthBounds bounds;
  bounds.stale_after = seconds(70);
  CHECK(CheckLiveness({Resource("r", seconds(70), 1)}, kNow, bounds).ok);
  CHECK_FALSE(CheckLiveness({Resource("r", seconds(71), 1)}, kNow, bounds).ok);
}

TEST_CASE("readiness waits for every resource's first list and names the ones missing") {
  std::vector<WatchHealth> resources = {Resource("widgets.example.com/v1", seconds(1), 0, true),
                                        Resource("gadgets.example.com/v1", seconds(1), 2, false)};
  resources[1].state = "empty";
  auto report = CheckReadiness(resources);
  CHECK_FALSE(report.ok);
  CHECK(report.body ==
        "widgets.example.com/v1 ok: synced (state watching)\n"
        "gadgets.example.com/v1 not synced: first list not complete (state empty)\n");
  resources[1].synced = true;
  CHECK(CheckReadiness(resources).ok);
}

TEST_CASE("readiness fails while another problem stands, naming it first, and liveness does not care") {
  std::vector<WatchHealth> resources = {Resource("widgets.example.com/v1", seconds(1), 0, true)};
  std::string store = "state file /var/lib/nodehook/state.db: writes failing for 42s (3 failed; failing: RecordHandled): "
                      "sqlite RecordHandled: no space left on /var/lib/nodehook (0 bytes free)";
  auto report = CheckReadiness(resources, {store});
  CHECK_FALSE(report.ok);
  CHECK(report.http_status() == 503);
  CHECK(report.body == "not ready: " + store + "\nwidgets.example.com/v1 ok: synced (state watching)\n");
  CHECK(CheckLiveness(resources, kNow, HealthBounds{}).ok);
  CHECK(CheckReadiness(resources, {}).ok);
}

TEST_CASE("the standard endpoints serve health, readiness and metrics from live snapshots") {
  FakeClock clock(kNow);
  Metrics metrics;
  metrics.GetCounter("watch_restarts_total", "Watch restarts").Increment(2);
  std::mutex mu;  // the server thread reads what the test thread changes
  WatchHealth widgets = Resource("widgets.example.com/v1", seconds(0), 0, false);
  auto snapshot = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return std::vector<WatchHealth>{widgets};
  };
  LocalServer server(LocalServerOptions{});
  RegisterStandardEndpoints(server, snapshot, clock, HealthBounds{}, metrics);
  REQUIRE(server.Start().ok());

  CHECK(HttpGet(server.port(), "/healthz").rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(HttpGet(server.port(), "/readyz").rfind("HTTP/1.1 503 ", 0) == 0);
  std::string scraped = HttpGet(server.port(), "/metrics");
  CHECK_THAT(scraped, Catch::Contains("Content-Type: text/plain; version=0.0.4"));
  CHECK_THAT(BodyOf(scraped), Catch::Contains("nodehook_watch_restarts_total 2\n"));

  {
    std::lock_guard<std::mutex> lock(mu);
    widgets.synced = true;
    widgets.consecutive_failures = 5;
  }
  clock.Advance(seconds(200));
  std::string health = HttpGet(server.port(), "/healthz");
  CHECK(health.rfind("HTTP/1.1 503 ", 0) == 0);
  CHECK(BodyOf(health) == "widgets.example.com/v1 stale: no activity for 200s and 5 reconnects failed (state watching)\n");
  CHECK(HttpGet(server.port(), "/readyz").rfind("HTTP/1.1 200 ", 0) == 0);
}

}  // namespace
}  // namespace nodehook
