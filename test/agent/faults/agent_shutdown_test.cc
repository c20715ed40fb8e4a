// Graceful shutdown of a real Agent (issue 9): after the stop signal running hooks get the
// shutdown grace to finish; hooks still running when it is over are stopped, recorded as
// interrupted and run again after a restart without counting a retry. Time is a FakeClock, so
// the grace passes only when the test says so.
#include <catch2/catch.hpp>

#include "test/agent/faults/agent_harness.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/gated_runner.h"

using namespace nodehook;
using namespace std::chrono_literals;

namespace {

constexpr int kGraceSeconds = 30;

// An agent whose one hook, for object `name`, runs until released or stopped.
struct HookRunningAtStop {
  explicit HookRunningAtStop(const std::string& name) {
    h.config.tuning.shutdown_grace_seconds = kGraceSeconds;
    h.config.tuning.batch_window_ms = 0;  // the FakeClock would never end a batching window
    h.Put(name, 1);
    h.Start(hooks, clock);
    REQUIRE(hooks.WaitForStarts(1, 30s));
  }

  std::optional<HandlerRecord> CreateProgress(const std::string& name) {
    auto record = h.store->GetHandler("uid-" + name, kReasonCreate);
    REQUIRE(record.ok());
    return *record;
  }

  bool Stored(const std::string& name) {
    auto stored = h.store->GetObject("uid-" + name);
    REQUIRE(stored.ok());
    return stored->has_value();
  }

  FakeClock clock;
  GatedRunner hooks;
  AgentHarness h;  // last: its destructor stops the agent while clock and hooks still exist
};

}  // namespace

TEST_CASE("a hook running at the stop signal may finish within the grace, and its result is stored") {
  HookRunningAtStop s("slow");

  s.h.stop->Cancel();
  s.clock.Advance(Duration(kGraceSeconds * 1000 - 1));
  s.hooks.ReleaseAll();
  s.h.thread.join();

  CHECK(s.hooks.cancelled() == 0);
  CHECK(s.Stored("slow"));
  CHECK_FALSE(s.CreateProgress("slow").has_value());
}

TEST_CASE("a hook still running when the grace is over is stopped, and runs again after a restart without a retry counted") {
  HookRunningAtStop s("stuck");

  s.h.stop->Cancel();
  s.clock.Advance(Duration(kGraceSeconds * 1000));
  s.h.thread.join();

  CHECK(s.hooks.cancelled() == 1);
  auto progress = s.CreateProgress("stuck");
  REQUIRE(progress.has_value());
  CHECK(progress->last_outcome == "interrupted");
  CHECK(progress->retries == 0);
  CHECK(progress->next_attempt_ms <= ToMillis(s.clock.Now()));
  CHECK_FALSE(s.Stored("stuck"));

  // The restart: the interrupted create runs again at once, as its first attempt.
  FakeRunner again;
  Agent restarted(s.h.config, *s.h.client, *s.h.store, *s.h.store, again, s.clock);
  CancelToken stop_restarted;
  std::thread run([&] { restarted.Run(stop_restarted); });
  bool ran = again.WaitFor([](const std::vector<ActionRequest>& calls) { return !calls.empty(); }, 30s);
  stop_restarted.Cancel();
  run.join();
  REQUIRE(ran);
  CHECK(FakeRunner::Env(again.calls()[0], "NODEHOOK_NAME") == "stuck");
  CHECK(FakeRunner::Env(again.calls()[0], "NODEHOOK_REASON") == kReasonCreate);
  CHECK(FakeRunner::Env(again.calls()[0], "NODEHOOK_RETRY") == "0");
}
