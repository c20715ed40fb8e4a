#include <catch2/catch.hpp>

#include <thread>

#include "agent/core/work_queue.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;

TEST_CASE("queue hands out keys first in, first out") {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.Add("b");
  q.Add("c");
  REQUIRE(*q.Get() == "a");
  REQUIRE(*q.Get() == "b");
  REQUIRE(*q.Get() == "c");
}

TEST_CASE("adding a queued key again merges into one item") {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.Add("a");
  REQUIRE(q.ReadyCount() == 1);
}

TEST_CASE("queue never hands out a key that is being processed") {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  REQUIRE(*q.Get() == "a");
  q.Add("a");
  q.Add("b");
  REQUIRE(*q.Get() == "b");  // not "a": it is still being processed
  REQUIRE(q.ReadyCount() == 0);
  q.Done("a");
  REQUIRE(q.ReadyCount() == 1);  // the re-add runs once, right after
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("delayed keys become ready only when the clock reaches them") {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("late", Duration(5000));
  q.AddAfter("early", Duration(1000));
  std::optional<std::string> got;
  std::thread worker([&] { got = q.Get(); });
  while (clock.waiters() == 0) std::this_thread::yield();
  REQUIRE(!got);
  clock.Advance(Duration(1000));
  worker.join();
  REQUIRE(*got == "early");
  REQUIRE(q.DelayedCount() == 1);
}

TEST_CASE("an immediate add overrides a pending delay") {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("a", Duration(60000));
  q.Add("a");
  REQUIRE(q.DelayedCount() == 0);
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("the earliest of two delays wins") {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("a", Duration(10000));
  q.AddAfter("a", Duration(2000));
  clock.Advance(Duration(2000));
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("shutting down releases a waiting worker") {
  FakeClock clock;
  WorkQueue q(clock);
  std::optional<std::string> got = std::string("unset");
  std::thread worker([&] { got = q.Get(); });
  while (clock.waiters() == 0) std::this_thread::yield();
  q.ShutDown();
  worker.join();
  REQUIRE(!got);
}
