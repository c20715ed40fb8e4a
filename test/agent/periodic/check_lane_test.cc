#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "agent/periodic/check_lane.h"
#include "agent/periodic/check_timing.h"
#include "agent/watch/resource_tracker.h"
#include "test/agent/periodic/periodic_fixture.h"
#include "test/fakes/gated_runner.h"

using namespace nodehook;

namespace {

const std::chrono::milliseconds kWait{10'000};  // only ever reached when a test fails

// The lane's threads, joined at the end of the test.
struct LaneThreads {
  CheckLane& lane;
  CancelToken hooks;
  std::vector<std::thread> threads;
  LaneThreads(CheckLane& l, int n) : lane(l) {
    for (int i = 0; i < n; ++i) threads.emplace_back([this] { lane.ThreadLoop(hooks); });
  }
  ~LaneThreads() {
    hooks.Cancel();
    lane.ShutDown();
    for (auto& t : threads) t.join();
  }
};

}  // namespace

TEST_CASE("at most max_concurrent_checks checks run at once, and workers keep getting object work meanwhile") {
  PeriodicFixture f;
  auto resources = std::vector<WatchedResource>{PeriodicFixture::Resource(60)};
  for (int i = 0; i < 4; ++i) f.Handle(resources[0], PeriodicWidget("u" + std::to_string(i), "1", i));
  GatedRunner gated;
  CheckRunner runner(*f.store, *f.store, gated, f.policy, f.clock, CheckRunnerOptions{"node-a", f.work_dir});
  WorkQueue main(f.clock);
  CheckLane lane(resources, {&f.cache}, main, runner, *f.store, f.clock, 2);
  for (int i = 0; i < 4; ++i) lane.Track(0, "u" + std::to_string(i));
  {
    LaneThreads threads(lane, lane.threads());
    f.clock.Advance(std::chrono::seconds(60));  // every first check is due
    REQUIRE(gated.WaitForStarts(2, kWait));
    // Both check threads are inside a hook and no other thread runs checks: a third cannot start.
    CHECK(gated.calls().size() == 2);
    // A change to another object goes straight to a worker.
    main.Add(QueueKey{0, "new"});
    auto key = main.Get();
    REQUIRE(key);
    CHECK(*key == QueueKey{0, "new"});
    main.Done(*key);
    gated.ReleaseAll();
    REQUIRE(gated.WaitForStarts(4, kWait));
  }
}

TEST_CASE("a check never runs while a worker has the object; it runs once the worker is done") {
  PeriodicFixture f;
  auto resources = std::vector<WatchedResource>{PeriodicFixture::Resource(60)};
  f.Handle(resources[0], PeriodicWidget("u1", "1", 1));
  CheckRunner runner(*f.store, *f.store, f.runner, f.policy, f.clock, CheckRunnerOptions{"node-a", f.work_dir});
  WorkQueue main(f.clock);
  CheckLane lane(resources, {&f.cache}, main, runner, *f.store, f.clock, 1);
  const QueueKey key = QueueKey{0, "u1"};
  main.Add(key);
  REQUIRE(main.Get() == key);  // a worker holds the object
  lane.Track(0, "u1");
  LaneThreads threads(lane, 1);
  while (f.clock.waiters() == 0) std::this_thread::yield();  // the check thread waits for the due time
  size_t sleeps = f.clock.sleeps();
  f.clock.Advance(std::chrono::seconds(60));
  // The check thread found the object busy, put it back for a second and went back to sleep.
  while (f.clock.sleeps() == sleeps) std::this_thread::yield();
  CHECK(f.Runs("check") == 0);
  main.Done(key);
  f.clock.Advance(kCheckBusyRetry);
  REQUIRE(f.runner.WaitFor([](const auto& calls) { return calls.size() == 2; }, kWait));  // create, check
  CHECK(f.Runs("check") == 1);
}

TEST_CASE("a checked object is claimed from the queue: its change waits for the check and then runs") {
  PeriodicFixture f;
  auto resources = std::vector<WatchedResource>{PeriodicFixture::Resource(60)};
  f.Handle(resources[0], PeriodicWidget("u1", "1", 1));
  GatedRunner gated;
  CheckRunner runner(*f.store, *f.store, gated, f.policy, f.clock, CheckRunnerOptions{"node-a", f.work_dir});
  WorkQueue main(f.clock);
  CheckLane lane(resources, {&f.cache}, main, runner, *f.store, f.clock, 1);
  lane.Track(0, "u1");
  const QueueKey key = QueueKey{0, "u1"};
  LaneThreads threads(lane, 1);
  f.clock.Advance(std::chrono::seconds(60));
  REQUIRE(gated.WaitForStarts(1, kWait));
  main.Add(key);  // merged: not handed to a worker while the check runs
  CHECK(main.ReadyCount() == 0);
  gated.ReleaseAll();
  REQUIRE(main.Get() == key);
  main.Done(key);
}

TEST_CASE("after a restart stored check times are kept and overdue checks are spread, not fired at once") {
  PeriodicFixture f;
  auto resources = std::vector<WatchedResource>{PeriodicFixture::Resource(600)};
  const TimePoint now = f.clock.Now();
  for (int i = 0; i < 20; ++i) {
    std::string uid = "u" + std::to_string(i);
    f.Handle(resources[0], PeriodicWidget(uid, "1", i));
    // Half were due an hour ago (the agent was down), half are due in five minutes.
    int64_t due = ToMillis(now) + (i % 2 ? -3'600'000 : 300'000);
    REQUIRE(f.store->SetCheckDue(uid, "widgets.example.com/v1", due).ok());
  }
  CheckRunner runner(*f.store, *f.store, f.runner, f.policy, f.clock, CheckRunnerOptions{"node-a", f.work_dir});
  std::set<int64_t> overdue_times;
  for (int i = 0; i < 20; ++i) {
    std::string uid = "u" + std::to_string(i);
    auto stored = (*f.store->CheckSchedule("widgets.example.com/v1")).at(uid);
    TimePoint due = runner.Schedule(resources[0], uid, stored);
    if (i % 2 == 0) {
      CHECK(due == now + Duration(300'000));
    } else {
      CHECK(due >= now);
      CHECK(due < now + kOverdueSpread);
      overdue_times.insert(ToMillis(due));
    }
  }
  CHECK(overdue_times.size() >= 9);  // ten overdue checks at (nearly) ten different times
}

TEST_CASE("the queue refuses to let a key be claimed while it is ready for a worker or being processed") {
  FakeClock clock;
  BasicWorkQueue<std::string> queue(clock);
  queue.Add("ready");
  CHECK_FALSE(queue.TryClaim("ready"));
  REQUIRE(queue.Get() == std::optional<std::string>("ready"));
  CHECK_FALSE(queue.TryClaim("ready"));  // a worker has it
  queue.Done("ready");
  CHECK(queue.TryClaim("ready"));
  CHECK_FALSE(queue.TryClaim("ready"));  // claimed once at a time
  queue.Done("ready");
  queue.ShutDown();
  CHECK_FALSE(queue.TryClaim("other"));
}
