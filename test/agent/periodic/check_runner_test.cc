#include <catch2/catch.hpp>

#include "agent/periodic/check_runner.h"
#include "agent/periodic/check_timing.h"
#include "test/agent/periodic/periodic_fixture.h"
#include "test/fakes/report_log.h"

using namespace nodehook;

namespace {

struct CheckFixture : PeriodicFixture {
  CheckRunner checks{*store, *store, runner, policy, clock, CheckRunnerOptions{"node-a", work_dir}};
  std::optional<Duration> Check(const WatchedResource& r, const std::string& uid) {
    return checks.Run(r, cache, uid, stop);
  }
  int64_t StoredDue(const std::string& uid) { return (*store->CheckSchedule("widgets.example.com/v1")).at(uid); }
};

}  // namespace

TEST_CASE("a check runs the check hook with the object on stdin and is due again one interval later") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(60);
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  REQUIRE(f.Check(r, "u1") == Duration(60'000));
  auto call = f.runner.calls().back();
  CHECK(call.argv == std::vector<std::string>{"/hooks/check"});
  CHECK(FakeRunner::Env(call, "NODEHOOK_REASON") == "check");
  CHECK(FakeRunner::Env(call, "NODEHOOK_UID") == "u1");
  CHECK(call.stdin_data.find(R"("size":3)") != std::string::npos);
  CHECK(f.StoredDue("u1") == ToMillis(f.clock.Now()) + 60'000);
  CHECK_FALSE((*f.store->GetHandler("u1", "check")).has_value());
}

TEST_CASE("a failing check is retried with backoff as handler check, and a success clears the failure") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(60);
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  f.runner.QueueExitCodes({1, 1});
  REQUIRE(f.Check(r, "u1") == Duration(1000));
  REQUIRE(f.Check(r, "u1") == Duration(2000));
  auto failing = *f.store->GetHandler("u1", "check");
  REQUIRE(failing.has_value());
  CHECK(failing->retries == 2);
  CHECK(failing->last_outcome == "failed");
  CHECK(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "1");
  CHECK(f.StoredDue("u1") == ToMillis(f.clock.Now()) + 2000);  // the retry time survives a restart
  REQUIRE(f.Check(r, "u1") == Duration(60'000));
  CHECK_FALSE((*f.store->GetHandler("u1", "check")).has_value());
  CHECK((*f.store->GetObject("u1")).has_value());  // the diffbase is untouched
}

TEST_CASE("a check that says in progress runs again after its delay without counting a retry") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(60);
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  f.runner.QueueExitCodes({100});
  REQUIRE(f.Check(r, "u1") == Duration(10'000));
  auto progress = *f.store->GetHandler("u1", "check");
  CHECK(progress->retries == 0);
  CHECK(progress->last_outcome == "in_progress");
}

TEST_CASE("a check that exhausts its retry limit gives up and goes back to its normal interval") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(60);
  r.hooks[kReasonCheck].max_retries = 1;
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  f.runner.QueueExitCodes({1});
  REQUIRE(f.Check(r, "u1") == Duration(60'000));
  CHECK((*f.store->GetHandler("u1", "check"))->last_outcome == "permanent_failure");
}

TEST_CASE("an object whose change is not handled yet is not checked; a deleted one is dropped") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(60);
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  f.cache.Upsert(PeriodicWidget("u1", "2", 4));  // update pending
  REQUIRE(f.Check(r, "u1") == Duration(60'000));
  CHECK(f.Runs("check") == 0);
  f.cache.Upsert(PeriodicWidget("u1", "3", 4, /*deleting=*/true));
  REQUIRE_FALSE(f.Check(r, "u1"));
  CHECK(f.Runs("check") == 0);
  CHECK((*f.store->CheckSchedule("widgets.example.com/v1")).count("u1") == 0);
}

TEST_CASE("a new object's first check is planned at its stable offset and stored; a stored one is kept") {
  CheckFixture f;
  auto r = PeriodicFixture::Resource(600);
  TimePoint first = f.checks.Schedule(r, "u1", std::nullopt);
  CHECK(first == FirstCheckDue(f.clock.Now(), "node-a", "u1", std::chrono::seconds(600)));
  CHECK(f.StoredDue("u1") == ToMillis(first));
  TimePoint kept = f.clock.Now() + Duration(5000);
  CHECK(f.checks.Schedule(r, "u2", ToMillis(kept)) == kept);
}

TEST_CASE("check failures and the recovery are reported as for other handlers, and counted as handler check") {
  PeriodicFixture f;
  ReportLog events;
  Metrics metrics;
  CheckRunnerOptions options{"node-a", f.work_dir};
  options.events = &events;
  options.metrics = &metrics;
  CheckRunner checks(*f.store, *f.store, f.runner, f.policy, f.clock, options);
  auto r = PeriodicFixture::Resource(60);
  f.Handle(r, PeriodicWidget("u1", "1", 3));
  f.runner.QueueExitCodes({1, 1});
  for (int i = 0; i < 3; ++i) checks.Run(r, f.cache, "u1", f.stop);
  CHECK(events.reports == std::vector<std::string>{"failing check 1: exited 1", "failing check 2: exited 1",
                                                   "recovered check 2"});
  std::string text = metrics.Render();
  CHECK(text.find(R"(nodehook_hook_runs_total{handler="check",outcome="failed",resource="widgets.example.com/v1"} 2)") !=
        std::string::npos);
  CHECK(text.find(R"(nodehook_hook_runs_total{handler="check",outcome="done",resource="widgets.example.com/v1"} 1)") !=
        std::string::npos);
}
