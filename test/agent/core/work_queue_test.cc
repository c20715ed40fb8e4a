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

namespace {
QueueOptions Batching() {
  QueueOptions o;
  o.batch_window = Duration(100);
  o.max_latency = Duration(1000);
  return o;
}

// Runs Get() on a thread and reports whether it returned within the clock's current time.
struct Getter {
  Getter(WorkQueue& queue, FakeClock& fake_clock) : q(queue), clock(fake_clock) {}
  WorkQueue& q;
  FakeClock& clock;
  std::optional<std::string> got;
  std::thread t{[this] { got = q.Get(); }};
  ~Getter() {
    if (t.joinable()) {
      q.ShutDown();
      t.join();
    }
  }
  void AwaitBlocked() {
    while (clock.waiters() == 0) std::this_thread::yield();
  }
};
}  // namespace

TEST_CASE("changes inside the batching window are merged and handled once the window passes") {
  FakeClock clock;
  WorkQueue q(clock, Batching());
  q.Add("a");
  clock.Advance(Duration(60));
  q.Add("a");  // pushes the window out to 160 ms
  Getter g(q, clock);
  g.AwaitBlocked();
  clock.Advance(Duration(60));  // 120 ms: still inside the window of the second add
  REQUIRE(q.ReadyCount() == 0);
  clock.Advance(Duration(40));  // 160 ms
  g.t.join();
  REQUIRE(*g.got == "a");
  REQUIRE(q.DelayedCount() == 0);
}

TEST_CASE("an object that never stops changing is still handled within the maximum latency") {
  FakeClock clock;
  WorkQueue q(clock, Batching());
  q.Add("busy");
  for (int i = 0; i < 9; ++i) {
    clock.Advance(Duration(99));
    q.Add("busy");
  }
  // 891 ms after the first add; the last add wants 991 ms, the cap is 1000 ms.
  Getter g(q, clock);
  g.AwaitBlocked();
  clock.Advance(Duration(100));  // 991 ms
  g.t.join();
  REQUIRE(*g.got == "busy");
}

TEST_CASE("the maximum latency caps the window even while adds keep coming") {
  FakeClock clock;
  WorkQueue q(clock, Batching());
  q.Add("busy");
  for (int i = 0; i < 20; ++i) {
    clock.Advance(Duration(50));
    q.Add("busy");  // each add would push the window out to now + 100 ms
  }
  // 1000 ms after the first add: due now, however recent the last add.
  REQUIRE(*q.Get() == "busy");
}
