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

namespace nodehook {
namespace {

TEST_CASE("histograms render cumulative buckets, +Inf, sum and count with the other labels") {
  Metrics m;
  Histogram& h = m.GetHistogram("hook_duration_seconds", "Hook run time", {{"handler", "create"}}, {0.1, 1});
  h.Observe(0.05);
  h.Observe(0.1);  // on the bound: counted in le="0.1", as Prometheus defines buckets
  h.Observe(0.5);
  h.Observe(7);
  CHECK(m.Render() ==
        "# HELP nodehook_hook_duration_seconds Hook run time\n"
        "# TYPE nodehook_hook_duration_seconds histogram\n"
        "nodehook_hook_duration_seconds_bucket{handler=\"create\",le=\"0.1\"} 2\n"
        "nodehook_hook_duration_seconds_bucket{handler=\"create\",le=\"1\"} 3\n"
        "nodehook_hook_duration_seconds_bucket{handler=\"create\",le=\"+Inf\"} 4\n"
        "nodehook_hook_duration_seconds_sum{handler=\"create\"} 7.65\n"
        "nodehook_hook_duration_seconds_count{handler=\"create\"} 4\n");
}

TEST_CASE("a histogram without labels still names its le label alone") {
  Metrics m;
  m.GetHistogram("h", "h", {}, {1}).Observe(2);
  std::string text = m.Render();
  CHECK(text.find("nodehook_h_bucket{le=\"1\"} 0\n") != std::string::npos);
  CHECK(text.find("nodehook_h_bucket{le=\"+Inf\"} 1\n") != std::string::npos);
  CHECK(text.find("nodehook_h_count 1\n") != std::string::npos);
}

TEST_CASE("process metrics keep their standard names and report this process") {
  Metrics m;
  RegisterProcessMetrics(m, "1.2.3");
  std::string text = m.Render();
  CHECK(text.find("# TYPE process_cpu_seconds_total counter\n") != std::string::npos);
  CHECK(text.find("# TYPE process_resident_memory_bytes gauge\n") != std::string::npos);
  CHECK(text.find("nodehook_build_info{version=\"1.2.3\"} 1\n") != std::string::npos);
  // This test process has stdin/stdout/stderr open at least, and a nonzero RSS.
  auto value_of = [&](const std::string& name) {
    size_t at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
  };
  CHECK(value_of("process_open_fds") >= 3);
  CHECK(value_of("process_resident_memory_bytes") > 1e6);
  CHECK(value_of("process_start_time_seconds") > 1.6e9);
}

}  // namespace
}  // namespace nodehook
