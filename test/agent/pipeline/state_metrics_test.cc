#include <catch2/catch.hpp>

#include "agent/pipeline/state_metrics.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;

namespace {

bool Shows(Metrics& m, const std::string& line) { return m.Render().find(line + "\n") != std::string::npos; }

}  // namespace

TEST_CASE("watched resources show zero pending and permanent handlers before the first refresh") {
  Metrics m;
  FakeClock clock;
  StateMetrics state(&m, clock, "/nonexistent/state.db", {"widgets.example.com/v1"});
  REQUIRE(Shows(m, "nodehook_handlers_pending_retry{resource=\"widgets.example.com/v1\"} 0"));
  REQUIRE(Shows(m, "nodehook_handlers_failed_permanently{resource=\"widgets.example.com/v1\"} 0"));
  REQUIRE(Shows(m, "nodehook_oldest_pending_retry_seconds 0"));
  REQUIRE(Shows(m, "nodehook_store_file_bytes 0"));
  REQUIRE(Shows(m, "nodehook_store_garbage_collected_total 0"));
}

TEST_CASE("the oldest pending retry ages at scrape time from the last refresh, across resources") {
  Metrics m;
  FakeClock clock;
  StateMetrics state(&m, clock, "", {"widgets.example.com/v1", "gadgets.example.com/v1"});
  StoreSummary summary;
  int64_t now_ms = ToMillis(clock.Now());
  summary.by_resource["widgets.example.com/v1"] = HandlerCounts{2, 1, now_ms - 5000};
  summary.by_resource["gadgets.example.com/v1"] = HandlerCounts{1, 0, now_ms - 9000};
  summary.rows["handlers"] = 4;
  state.Refresh(summary);
  REQUIRE(Shows(m, "nodehook_handlers_pending_retry{resource=\"widgets.example.com/v1\"} 2"));
  REQUIRE(Shows(m, "nodehook_handlers_failed_permanently{resource=\"widgets.example.com/v1\"} 1"));
  REQUIRE(Shows(m, "nodehook_handlers_pending_retry{resource=\"gadgets.example.com/v1\"} 1"));
  REQUIRE(Shows(m, "nodehook_oldest_pending_retry_seconds 9"));
  REQUIRE(Shows(m, "nodehook_store_rows{table=\"handlers\"} 4"));
  clock.Advance(Duration(60'000));
  REQUIRE(Shows(m, "nodehook_oldest_pending_retry_seconds 69"));
  state.GarbageCollected(3);
  REQUIRE(Shows(m, "nodehook_store_garbage_collected_total 3"));
}
