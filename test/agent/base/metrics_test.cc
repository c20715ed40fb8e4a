#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "agent/base/metrics.h"

namespace nodehook {
namespace {

TEST_CASE("metrics render HELP, TYPE and samples with the nodehook_ prefix, sorted by name") {
  Metrics m;
  m.GetGauge("watch_synced", "1 once the first list completed", {{"resource", "widgets.example.com/v1"}}).Set(1);
  m.GetCounter("hooks_total", "Hook runs by outcome", {{"outcome", "ok"}}).Increment(3);
  m.GetCounter("hooks_total", "ignored: the first help wins", {{"outcome", "failed"}}).Increment();
  CHECK(m.Render() ==
        "# HELP nodehook_hooks_total Hook runs by outcome\n"
        "# TYPE nodehook_hooks_total counter\n"
        "nodehook_hooks_total{outcome=\"failed\"} 1\n"
        "nodehook_hooks_total{outcome=\"ok\"} 3\n"
        "# HELP nodehook_watch_synced 1 once the first list completed\n"
        "# TYPE nodehook_watch_synced gauge\n"
        "nodehook_watch_synced{resource=\"widgets.example.com/v1\"} 1\n");
}

TEST_CASE("the same name and labels in any order give the same metric") {
  Metrics m;
  Counter& a = m.GetCounter("nodehook_events_total", "h", {{"type", "ADDED"}, {"resource", "r"}});
  Counter& b = m.GetCounter("events_total", "h", {{"resource", "r"}, {"type", "ADDED"}});
  CHECK(&a == &b);
}

TEST_CASE("label values escape backslash, quote and newline; names lose invalid characters") {
  CHECK(PrometheusLabels({{"path", "a\\b\"c\nd"}}) == "{path=\"a\\\\b\\\"c\\nd\"}");
  CHECK(PrometheusLabels({{"bad-key", "v"}}) == "{bad_key=\"v\"}");
  CHECK(PrometheusName("watch.restarts-total") == "nodehook_watch_restarts_total");
  CHECK(PrometheusName("9lives") == "nodehook__lives");
}

TEST_CASE("HELP text escapes newlines so one metric cannot break the exposition") {
  Metrics m;
  m.GetGauge("g", "line one\nline two \\ end").Set(0.25);
  CHECK(m.Render() == "# HELP nodehook_g line one\\nline two \\\\ end\n# TYPE nodehook_g gauge\nnodehook_g 0.25\n");
}

TEST_CASE("a name used as both counter and gauge exports only the first kind") {
  Metrics m;
  m.GetCounter("x", "h").Increment(2);
  m.GetGauge("x", "h").Set(7);
  CHECK(m.Render() == "# HELP nodehook_x h\n# TYPE nodehook_x counter\nnodehook_x 2\n");
}

TEST_CASE("collectors refresh derived gauges before every render") {
  Metrics m;
  int calls = 0;
  m.AddCollector([&calls](Metrics& r) { r.GetGauge("seconds_since_event", "s").Set(++calls * 10); });
  CHECK(m.Render().find("nodehook_seconds_since_event 10\n") != std::string::npos);
  CHECK(m.Render().find("nodehook_seconds_since_event 20\n") != std::string::npos);
}

TEST_CASE("counters and gauges lose no updates under concurrent increments") {
  Metrics m;
  Counter& c = m.GetCounter("c", "h");
  Gauge& g = m.GetGauge("g", "h");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        g.Add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(c.value() == 40000);
  CHECK(g.value() == 40000);
}

TEST_CASE("special gauge values use Prometheus spellings") {
  Metrics m;
  m.GetGauge("inf", "h").Set(1.0 / 0.0);
  m.GetGauge("neg", "h").Set(-2);
  std::string text = m.Render();
  CHECK(text.find("nodehook_inf +Inf\n") != std::string::npos);
  CHECK(text.find("nodehook_neg -2\n") != std::string::npos);
}

}  // namespace
}  // namespace nodehook
