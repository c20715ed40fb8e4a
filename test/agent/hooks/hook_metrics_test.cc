#include <catch2/catch.hpp>

#include "agent/hooks/hook_metrics.h"

using namespace nodehook;

namespace {

HookOutcome Outcome(HookVerdict verdict, bool timed_out = false, Duration took = Duration(1500)) {
  HookOutcome o;
  o.verdict = verdict;
  o.timed_out = timed_out;
  o.duration = took;
  return o;
}

bool Shows(Metrics& m, const std::string& line) { return m.Render().find(line + "\n") != std::string::npos; }

std::string Runs(const char* outcome) {
  return std::string("nodehook_hook_runs_total{handler=\"create\",outcome=\"") + outcome +
         "\",resource=\"widgets.example.com/v1\"}";
}

}  // namespace

TEST_CASE("a run's outcome label follows the hook protocol, and giving up wins over how it ended") {
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kDone), false)) == "done");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kRetryLater), false)) == "retry_later");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kInProgress), false)) == "in_progress");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kFailed), false)) == "failed");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kFailed, true), false)) == "timeout");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kFailed, true), true)) == "permanent");
  REQUIRE(std::string(HookRunOutcome(Outcome(HookVerdict::kRetryLater), true)) == "permanent");
}

TEST_CASE("declared hooks show every outcome at zero before the first run") {
  Metrics m;
  HookMetrics(&m).Declare("widgets.example.com/v1", "create");
  for (const char* outcome : {"done", "retry_later", "in_progress", "failed", "timeout", "permanent"}) {
    REQUIRE(Shows(m, Runs(outcome) + " 0"));
  }
  REQUIRE(Shows(m, "nodehook_hook_duration_seconds_count{handler=\"create\",resource=\"widgets.example.com/v1\"} 0"));
}

TEST_CASE("each run is counted once under its outcome and its duration observed; a cancelled run is not") {
  Metrics m;
  HookMetrics hooks(&m);
  hooks.Ran("widgets.example.com/v1", "create", Outcome(HookVerdict::kDone), false);
  hooks.Ran("widgets.example.com/v1", "create", Outcome(HookVerdict::kFailed, true), false);
  hooks.Ran("widgets.example.com/v1", "create", Outcome(HookVerdict::kFailed), true);
  hooks.Ran("widgets.example.com/v1", "create", Outcome(HookVerdict::kCancelled), false);
  REQUIRE(Shows(m, Runs("done") + " 1"));
  REQUIRE(Shows(m, Runs("timeout") + " 1"));
  REQUIRE(Shows(m, Runs("permanent") + " 1"));
  REQUIRE(m.Render().find("cancelled") == std::string::npos);
  REQUIRE(Shows(m, "nodehook_hook_duration_seconds_count{handler=\"create\",resource=\"widgets.example.com/v1\"} 3"));
  REQUIRE(Shows(m, "nodehook_hook_duration_seconds_sum{handler=\"create\",resource=\"widgets.example.com/v1\"} 4.5"));
}

TEST_CASE("a hook that timed out is classified as failed and marked as timed out, with its duration") {
  ActionResult r;
  r.kind = ActionResult::Kind::kTimedOut;
  r.message = "timed out after 1s";
  r.duration = Duration(3000);
  HookOutcome o = ClassifyHookResult(r, std::optional<std::string>());
  REQUIRE(o.verdict == HookVerdict::kFailed);
  REQUIRE(o.timed_out);
  REQUIRE(o.duration == Duration(3000));
}
