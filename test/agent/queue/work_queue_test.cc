#include <catch2/catch.hpp>

#include <thread>

#include "agent/base/metrics.h"
#include "agent/queue/work_queue.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;

// The queue keyed by plain text, which keeps these tests short.
using TextQueue = BasicWorkQueue<std::string>;

TEST_CASE("queue hands out keys first in, first out") {
  FakeClock clock;
  TextQueue q(clock);
  q.Add("a");
  q.Add("b");
  q.Add("c");
  REQUIRE(*q.Get() == "a");
  REQUIRE(*q.Get() == "b");
  REQUIRE(*q.Get() == "c");
}

TEST_CASE("adding a queued key again merges into one item") {
  FakeClock clock;
  TextQueue q(clock);
  q.Add("a");
  q.Add("a");
  REQUIRE(q.ReadyCount() == 1);
}

TEST_CASE("queue never hands out a key that is being processed") {
  FakeClock clock;
  TextQueue q(clock);
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
  TextQueue q(clock);
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
  TextQueue q(clock);
  q.AddAfter("a", Duration(60000));
  q.Add("a");
  REQUIRE(q.DelayedCount() == 0);
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("the earliest of two delays wins") {
  FakeClock clock;
  TextQueue q(clock);
  q.AddAfter("a", Duration(10000));
  q.AddAfter("a", Duration(2000));
  clock.Advance(Duration(2000));
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("shutting down releases a waiting worker") {
  FakeClock clock;
  TextQueue q(clock);
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
  Getter(TextQueue& queue, FakeClock& fake_clock) : q(queue), clock(fake_clock) {}
  TextQueue& q;
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

TEST_CASE("a burst of handled keys is forgotten as the next ones finish, with no change added after it") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  for (int i = 0; i < 50; ++i) q.Add("k" + std::to_string(i));
  for (int i = 0; i < 40; ++i) q.Done(*q.Get());
  CHECK(q.HotCount() == 40);  // all within one window
  clock.Advance(Duration(100));
  for (int i = 40; i < 50; ++i) q.Done(*q.Get());
  CHECK(q.HotCount() == 10);  // the first 40 are cold now: nothing would batch them
}

TEST_CASE("Trim forgets the last window of a burst that no handled key followed") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  for (int i = 0; i < 50; ++i) q.Add("k" + std::to_string(i));
  for (int i = 0; i < 50; ++i) q.Done(*q.Get());
  q.Trim();
  CHECK(q.HotCount() == 50);  // still within the window
  clock.Advance(Duration(100));
  CHECK(q.HotCount() == 50);  // nothing finished since: nothing forgot them
  q.Trim();
  CHECK(q.HotCount() == 0);
  q.Add("k0");  // cold again: ready at once, not batched
  CHECK(q.ReadyCount() == 1);
}

TEST_CASE("the first change of an idle object is ready at once, whatever the batching window") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  q.Add("idle");
  REQUIRE(q.ReadyCount() == 1);
  REQUIRE(*q.Get() == "idle");
}

TEST_CASE("changes to an object handled moments ago are merged and handled one window after its run") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  q.Add("a");
  REQUIRE(*q.Get() == "a");
  q.Done("a");  // finished at 0 ms
  clock.Advance(Duration(30));
  q.Add("a");
  clock.Advance(Duration(30));
  q.Add("a");
  REQUIRE(q.ReadyCount() == 0);
  REQUIRE(q.DelayedCount() == 1);
  Getter g(q, clock);
  g.AwaitBlocked();
  clock.Advance(Duration(39));  // 99 ms
  REQUIRE(q.ReadyCount() == 0);
  clock.Advance(Duration(1));  // 100 ms after the run
  g.t.join();
  REQUIRE(*g.got == "a");
  REQUIRE(q.DelayedCount() == 0);
}

TEST_CASE("an object that changed while it was handled runs once more, one window later") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  q.Add("a");
  REQUIRE(*q.Get() == "a");
  q.Add("a");
  q.Add("a");
  clock.Advance(Duration(20));
  q.Done("a");
  REQUIRE(q.ReadyCount() == 0);
  REQUIRE(q.DelayedCount() == 1);
  clock.Advance(Duration(100));
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("an object that never stops changing runs at most once per window and never waits longer") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  int runs = 0;
  q.Add("busy");
  for (int ms = 0; ms < 1000; ms += 10) {
    if (q.ReadyCount() == 1) {
      REQUIRE(*q.Get() == "busy");
      ++runs;
      q.Done("busy");
    }
    clock.Advance(Duration(10));
    q.Add("busy");
  }
  // Runs at 0, 100, ..., 900 ms: one per window, none skipped.
  REQUIRE(runs == 10);
}

TEST_CASE("max_latency caps the batching window") {
  FakeClock clock;
  QueueOptions o = Batching();
  o.max_latency = Duration(40);
  TextQueue q(clock, o);
  q.Add("a");
  REQUIRE(*q.Get() == "a");
  q.Done("a");
  q.Add("a");
  clock.Advance(Duration(40));
  REQUIRE(*q.Get() == "a");
}

TEST_CASE("a change of an idle object beats its pending retry") {
  FakeClock clock;
  TextQueue q(clock, Batching());
  q.AddAfter("a", Duration(60'000));
  q.Add("a");
  REQUIRE(q.ReadyCount() == 1);
  REQUIRE(q.DelayedCount() == 0);
}

TEST_CASE("many delayed keys fall due in time order, ties in insertion order") {
  FakeClock clock;
  TextQueue q(clock);
  for (int i = 999; i >= 0; --i) q.AddAfter("k" + std::to_string(i), Duration(1 + i % 10));
  clock.Advance(Duration(10));
  std::vector<std::string> order;
  for (int i = 0; i < 1000; ++i) order.push_back(*q.Get());
  // Due time 1 first: k990, k980, ... (inserted first), then due time 2, ...
  REQUIRE(order.front() == "k990");
  REQUIRE(order[99] == "k0");
  REQUIRE(order[100] == "k991");
  REQUIRE(order.back() == "k9");
}

TEST_CASE("queue metrics count adds and measure the wait from the first change to a worker") {
  FakeClock clock;
  Metrics m;
  QueueOptions o;
  o.metrics = &m;
  TextQueue q(clock, o);
  q.AddAfter("a", Duration(250));
  q.Add("b");
  clock.Advance(Duration(30));
  q.Add("b");
  REQUIRE(*q.Get() == "b");
  std::string text = m.Render();
  CHECK(text.find("nodehook_queue_adds_total 2\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_retries_total 1\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_latency_seconds_bucket{le=\"0.025\"} 0\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_latency_seconds_bucket{le=\"0.05\"} 1\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_work_in_progress 1\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_delayed 1\n") != std::string::npos);
  clock.Advance(Duration(2000));
  text = m.Render();
  // Taken at 30 ms, still running at 2030 ms.
  CHECK(text.find("nodehook_queue_longest_running_seconds 2\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_unfinished_work_seconds 2\n") != std::string::npos);
  q.Done("b");
  text = m.Render();
  CHECK(text.find("nodehook_queue_longest_running_seconds 0\n") != std::string::npos);
  CHECK(text.find("nodehook_queue_work_duration_seconds_count 1\n") != std::string::npos);
}

TEST_CASE("at debug level every queue decision is logged with its key and what happens next") {
  CapturedLog log;
  FakeClock clock;
  QueueOptions options;
  options.batch_window = Duration(100);
  TextQueue q(clock, options);
  {
    ScopedLogLevel debug(LogLevel::kDebug);
    q.Add("0/u1");
    q.Add("0/u1");
    REQUIRE(*q.Get() == "0/u1");
    q.Add("0/u1");
    q.Done("0/u1");
    q.AddAfter("0/u2", Duration(1500));
  }
  CHECK(log.Count(R"(event="queue: ready now" key=0/u1 next="hand to a worker")") == 1);
  CHECK(log.Count(R"(event="queue: merged into ready" key=0/u1)") == 1);
  CHECK(log.Count(R"(event="queue: merged into running" key=0/u1 next="run again when it finishes")") == 1);
  CHECK(log.Count(R"(event="queue: changed while running" key=0/u1 next="run in 100ms")") == 1);
  CHECK(log.Count(R"(event="queue: retry scheduled" key=0/u2 next="run in 1500ms")") == 1);

  q.Add("0/u3");  // back at info level: no debug lines
  CHECK(log.Count("0/u3") == 0);
}
