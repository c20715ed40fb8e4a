// ShutdownGrace: the stop sequence for running hooks, driven by a FakeClock.
#include <catch2/catch.hpp>

#include <thread>

#include "agent/pipeline/shutdown_grace.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;
using namespace std::chrono_literals;

namespace {

constexpr Duration kGrace = 30s;

// Runs ShutdownGrace::Run on its own thread, as the agent does.
struct GraceThread {
  FakeClock clock;
  CancelToken stop;
  CancelToken hooks;
  ShutdownGrace grace{clock, kGrace, stop};
  std::thread thread{[this] { grace.Run(hooks); }};

  ~GraceThread() {
    if (thread.joinable()) {
      grace.WorkersDone();
      thread.join();
    }
  }

  // Returns once the waiting thread has looked at the clock again after `d` passed and decided
  // to keep waiting (FakeClock::sleeps grows), or has returned.
  void AdvanceAndLetItLook(Duration d) {
    const size_t before = clock.sleeps();
    clock.Advance(d);
    while (clock.sleeps() == before && !hooks.cancelled()) std::this_thread::yield();
  }

  void WaitUntilWaitingOnTheClock() {
    while (clock.waiters() == 0) std::this_thread::yield();
  }
};

}  // namespace

TEST_CASE("without a stop signal, finished workers end the grace without stopping hooks") {
  GraceThread g;
  g.grace.WorkersDone();
  g.thread.join();
  CHECK_FALSE(g.hooks.cancelled());
}

TEST_CASE("running hooks are not stopped before the grace is over, and are stopped when it is") {
  GraceThread g;
  g.stop.Cancel();
  g.WaitUntilWaitingOnTheClock();

  g.AdvanceAndLetItLook(kGrace - 1ms);
  CHECK_FALSE(g.hooks.cancelled());

  g.clock.Advance(1ms);
  g.thread.join();  // returns only after it stopped the hooks
  CHECK(g.hooks.cancelled());
}

TEST_CASE("workers that finish within the grace end the wait, and no hook is stopped") {
  GraceThread g;
  g.stop.Cancel();
  g.WaitUntilWaitingOnTheClock();
  g.AdvanceAndLetItLook(kGrace / 2);

  g.grace.WorkersDone();
  g.thread.join();
  g.clock.Advance(kGrace);
  CHECK_FALSE(g.hooks.cancelled());
}

TEST_CASE("the grace counts from the stop signal, not from when the waiting thread wakes up") {
  FakeClock clock;
  CancelToken stop, hooks;
  ShutdownGrace grace(clock, kGrace, stop);
  stop.Cancel();
  clock.Advance(kGrace);  // all of it passes before the waiting thread even starts
  grace.Run(hooks);       // returns at once: the grace is already over
  CHECK(hooks.cancelled());
}
