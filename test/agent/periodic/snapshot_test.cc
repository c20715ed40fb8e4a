#include <catch2/catch.hpp>

#include "agent/periodic/snapshot_lane.h"
#include "agent/periodic/snapshot_runner.h"
#include "test/agent/periodic/periodic_fixture.h"
#include "test/fakes/report_log.h"

using namespace nodehook;

namespace {

WatchedResource SnapshotResource() {
  WatchedResource r;
  r.ref = {"example.com", "v1", "widgets", "", ""};
  r.hooks[kReasonSnapshot] = HookSpec{{"/hooks/snapshot"}, std::chrono::seconds(5)};
  return r;
}

struct SnapshotFixture : PeriodicFixture {
  std::vector<WatchedResource> resources{SnapshotResource()};
  SnapshotRunner runner_under_test{*store, runner, policy, clock, SnapshotRunnerOptions{"node-a", work_dir}};
  SnapshotLane lane{resources, {&cache}, runner_under_test, clock, SnapshotLaneOptions{Duration(100), Duration(1000)}};

  // The first list of what the cache holds, and the snapshot run after it.
  void FirstRun() { REQUIRE(RunAfterChange() == 1); }
  // A change (or relist), and what the lane runs once the window has passed: hook runs made.
  size_t RunAfterChange() {
    lane.Changed(0);
    clock.Advance(Duration(100));
    return RunDue();
  }
  // A new agent on the same store and cache, after its first list: hook runs made.
  size_t RunAfterRestart() {
    size_t before = runner.call_count();
    SnapshotLane restarted{resources, {&cache}, runner_under_test, clock, SnapshotLaneOptions{}};
    restarted.Changed(0);
    clock.Advance(Duration(100));
    REQUIRE(restarted.RunDue(stop));
    return runner.call_count() - before;
  }
  // Runs every snapshot due now; returns how many hook runs that made.
  size_t RunDue() {
    size_t before = runner.call_count();
    while (lane.RunDue(stop)) {
    }
    return runner.call_count() - before;
  }
};

}  // namespace

TEST_CASE("the snapshot hook gets every live object as one JSON array, once after the first list") {
  SnapshotFixture f;
  f.cache.Upsert(PeriodicWidget("b", "1", 2));
  f.cache.Upsert(PeriodicWidget("a", "1", 1));
  f.cache.Upsert(PeriodicWidget("c", "1", 3, /*deleting=*/true));
  CHECK_FALSE(f.lane.NextDue());  // nothing before the first list
  f.lane.Changed(0);              // the first list
  CHECK(f.RunDue() == 0);         // the window has not passed
  f.clock.Advance(Duration(100));
  REQUIRE(f.RunDue() == 1);
  auto call = f.runner.calls().back();
  CHECK(FakeRunner::Env(call, "NODEHOOK_REASON") == "snapshot");
  CHECK(call.stdin_data == "[" + PeriodicWidget("a", "1", 1)->json + "," + PeriodicWidget("b", "1", 2)->json + "]");
  auto stored = *f.store->GetSnapshot("widgets.example.com/v1");
  REQUIRE(stored.has_value());
  CHECK(stored->last_outcome == "done");
  CHECK_FALSE(stored->done_digest.empty());
}

TEST_CASE("ten changes within the batch window make one snapshot run") {
  SnapshotFixture f;
  for (int i = 0; i < 50; ++i) f.cache.Upsert(PeriodicWidget("u" + std::to_string(i), "1", i));
  f.FirstRun();
  for (int i = 0; i < 10; ++i) {
    f.cache.Upsert(PeriodicWidget("u" + std::to_string(i), "2", 100 + i));
    f.lane.Changed(0);
    f.clock.Advance(Duration(50));
    CHECK(f.RunDue() == 0);
  }
  f.clock.Advance(Duration(50));
  REQUIRE(f.RunDue() == 1);
  CHECK(f.runner.calls().back().stdin_data.find(R"("size":109)") != std::string::npos);
}

TEST_CASE("a stream of changes still runs the snapshot within max latency of its first change") {
  SnapshotFixture f;
  f.cache.Upsert(PeriodicWidget("u1", "1", 1));
  f.FirstRun();
  // A change every 90 ms: the 100 ms window alone would keep moving the run out.
  for (int i = 0; i < 11; ++i) {
    f.cache.Upsert(PeriodicWidget("u1", std::to_string(i + 2), i + 2));
    f.lane.Changed(0);
    f.clock.Advance(Duration(90));
    CHECK(f.RunDue() == 0);
  }
  f.cache.Upsert(PeriodicWidget("u1", "20", 20));
  f.lane.Changed(0);
  f.clock.Advance(Duration(10));  // 1000 ms after the first of these changes
  CHECK(f.RunDue() == 1);
}

TEST_CASE("a status-only change or a restart with the same objects does not run the snapshot again") {
  SnapshotFixture f;
  f.cache.Upsert(PeriodicWidget("u1", "1", 1));
  f.FirstRun();
  f.cache.Upsert(PeriodicWidget("u1", "2", 1));  // a new resourceVersion, the same essence
  CHECK(f.RunAfterChange() == 0);
  CHECK(f.RunAfterRestart() == 0);
}

TEST_CASE("run_on_start runs the snapshot once after a restart even with nothing changed") {
  SnapshotFixture f;
  f.resources[0].hooks[kReasonSnapshot].run_on_start = true;
  f.cache.Upsert(PeriodicWidget("u1", "1", 1));
  f.FirstRun();
  CHECK(f.RunAfterChange() == 0);  // a relist, nothing changed: not the first run any more
  CHECK(f.RunAfterRestart() == 1);
}

TEST_CASE("a failing snapshot hook is retried with backoff, and its retry state is stored") {
  SnapshotFixture f;
  f.cache.Upsert(PeriodicWidget("u1", "1", 1));
  f.runner.QueueExitCodes({1, 1});
  f.FirstRun();
  auto stored = *f.store->GetSnapshot("widgets.example.com/v1");
  CHECK(stored->retries == 1);
  CHECK(stored->last_outcome == "failed");
  CHECK(stored->done_digest.empty());
  CHECK(f.lane.NextDue() == f.clock.Now() + Duration(1000));
  f.clock.Advance(Duration(999));
  CHECK(f.RunDue() == 0);
  f.clock.Advance(Duration(1));
  REQUIRE(f.RunDue() == 1);
  CHECK(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "1");
  CHECK(f.lane.NextDue() == f.clock.Now() + Duration(2000));
  f.clock.Advance(Duration(2000));
  REQUIRE(f.RunDue() == 1);
  stored = *f.store->GetSnapshot("widgets.example.com/v1");
  CHECK(stored->last_outcome == "done");
  CHECK(stored->retries == 0);
}

TEST_CASE("a failing snapshot is reported on this node's Node object, and its recovery too") {
  SnapshotFixture f;
  ReportLog events;
  SnapshotRunnerOptions options{"node-a", f.work_dir};
  options.events = &events;
  SnapshotRunner runner(*f.store, f.runner, f.policy, f.clock, options);
  f.cache.Upsert(PeriodicWidget("u1", "1", 1));
  f.runner.QueueExitCodes({1});
  REQUIRE(runner.Run(f.resources[0], f.cache, true, f.stop) == Duration(1000));
  f.clock.Advance(Duration(1000));
  REQUIRE_FALSE(runner.Run(f.resources[0], f.cache, false, f.stop));
  CHECK(events.reports == std::vector<std::string>{"failing snapshot widgets.example.com/v1 1: exited 1",
                                                   "recovered snapshot widgets.example.com/v1 1"});
}
