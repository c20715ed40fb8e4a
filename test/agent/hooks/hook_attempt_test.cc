#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/hooks/hook_attempt.h"
#include "agent/hooks/hook_call.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_runner.h"

using namespace nodehook;
namespace fs = std::filesystem;

namespace {

RetryOptions Options() {
  RetryOptions options;  // base 1s, factor 2, no jitter
  options.limit = 3;
  return options;
}

// A hook run through the fake runner, and the agent's policy on a fake clock: base 1s, factor 2,
// no jitter, three failures at the most.
struct Fixture {
  FakeClock clock;
  FakeRunner runner;
  CancelToken cancel;
  std::string work_dir = "/tmp/nodehook-hook-attempt-test-" + std::to_string(::getpid());
  ScratchPool scratch{work_dir};
  HookSpec hook{{"/hooks/check"}, std::chrono::seconds(5)};
  BackoffRetryPolicy policy{clock, Options()};

  ~Fixture() { fs::remove_all(work_dir); }

  HookOutcome Run(int exit_code) {
    runner.QueueExitCodes({exit_code});
    HookInput input;
    input.reason = "check";
    input.meta = {"u1", "ns", "w1", "1", false};
    input.new_object = R"({"spec":{}})";
    return RunHook(runner, hook, input, scratch, cancel);
  }
  // Exit `exit_code` with a result file asking for `delay_seconds`.
  HookOutcome RunAsking(int exit_code, int delay_seconds) {
    runner.OnRun([delay_seconds](const ActionRequest& r) {
      std::ofstream(FakeRunner::Env(r, "NODEHOOK_RESULT_FILE"))
          << R"({"delay_seconds":)" << delay_seconds << R"(,"message":"busy"})";
    });
    return Run(exit_code);
  }
};

const NextWords kWords{"wait for the object to change", "", " or on the next change"};

}  // namespace

TEST_CASE("a failure counts a retry, backs off, and the record takes the decision") {
  Fixture f;
  HandlerRecord progress;
  progress.retries = 1;
  progress.first_start_ms = ToMillis(f.clock.Now());
  progress.target = "digest";
  HookOutcome outcome = f.Run(1);
  REQUIRE(outcome.verdict == HookVerdict::kFailed);

  NextAttempt after = DecideNextAttempt(f.policy, f.hook, outcome, f.clock.Now(), progress);
  CHECK(after.outcome == "failed");
  CHECK(after.retries == 2);
  CHECK(after.delay == Duration{2000});
  CHECK_FALSE(after.permanent);
  CHECK(progress.retries == 2);
  CHECK(progress.last_outcome == "failed");
  CHECK(progress.last_message == outcome.message);
  CHECK(progress.next_attempt_ms == ToMillis(f.clock.Now()) + 2000);
  CHECK(progress.target == "digest");  // only the attempt's fields move
  CHECK(NextText(kWords, after, outcome, after.delay) == "retry in 2.0s");
}

TEST_CASE("a hook in progress or asking to retry later waits the delay it asked for") {
  struct Row {
    int exit_code;
    const char* outcome;
    int retries;  // after the run, from 1: in progress counts none
    const char* next;
    const char* next_snapshot;  // in words with the same tail either way, after 1.5s
  };
  for (const Row& row : {Row{kExitInProgress, "in_progress", 1, "run again in 30.0s or on the next change",
                             "run again in 1.5s, or on a change"},
                         Row{kExitRetryLater, "retry_later", 2, "retry in 30.0s", "retry in 1.5s, or on a change"}}) {
    CAPTURE(row.outcome);
    Fixture f;
    HandlerRecord progress;
    progress.retries = 1;
    progress.first_start_ms = ToMillis(f.clock.Now());
    HookOutcome outcome = f.RunAsking(row.exit_code, 30);

    NextAttempt after = DecideNextAttempt(f.policy, f.hook, outcome, f.clock.Now(), progress);
    CHECK(after.outcome == row.outcome);
    CHECK(progress.retries == row.retries);
    CHECK(progress.last_message == "busy");
    CHECK(progress.next_attempt_ms == ToMillis(f.clock.Now()) + 30'000);
    CHECK(NextText(kWords, after, outcome, after.delay) == row.next);
    CHECK(NextText({"give up", ", or on a change", ", or on a change"}, after, outcome, Duration{1500}) ==
          row.next_snapshot);
  }
}

TEST_CASE("out of retries the record is due never and the lane's words say what waits") {
  Fixture f;
  HandlerRecord progress;
  progress.retries = 2;  // the third failure is the limit
  progress.first_start_ms = ToMillis(f.clock.Now());
  progress.next_attempt_ms = 42;
  HookOutcome outcome = f.Run(1);

  NextAttempt after = DecideNextAttempt(f.policy, f.hook, outcome, f.clock.Now(), progress);
  CHECK(after.permanent);
  CHECK(progress.retries == 3);
  CHECK(progress.last_outcome == kOutcomePermanentFailure);
  CHECK(progress.next_attempt_ms == 0);
  CHECK(NextText(kWords, after, outcome, after.delay) == "wait for the object to change");
}

TEST_CASE("the hook's total time limit counts from the record's first start") {
  Fixture f;
  f.hook.max_total_seconds = 60;
  SnapshotRecord progress;  // the other record kind shares the attempt's fields
  progress.first_start_ms = ToMillis(f.clock.Now());
  f.clock.Advance(std::chrono::seconds(59));
  NextAttempt early = DecideNextAttempt(f.policy, f.hook, f.Run(1), f.clock.Now(), progress);
  CHECK_FALSE(early.permanent);
  f.clock.Advance(std::chrono::seconds(1));
  NextAttempt late = DecideNextAttempt(f.policy, f.hook, f.Run(1), f.clock.Now(), progress);
  CHECK(late.permanent);
  CHECK(progress.retries == 2);
}

TEST_CASE("a decision made elsewhere is written the same way") {
  HandlerRecord progress;
  progress.retries = 4;
  TimePoint now = FromMillis(1'000'000);
  RecordNextAttempt(progress, NextAttempt{"retry_later", 5, Duration{2500}, false}, "later", now);
  CHECK(progress.retries == 5);
  CHECK(progress.last_outcome == "retry_later");
  CHECK(progress.last_message == "later");
  CHECK(progress.next_attempt_ms == 1'002'500);
  CHECK(NextAttemptMs(NextAttempt{kOutcomePermanentFailure, 6, Duration{2500}, true}, now) == 0);
}

TEST_CASE("a failed save is noted after the next, in the lane's words") {
  CHECK(SaveNote(Status::Ok()).empty());
  Status full = UnavailableError("disk full");
  CHECK(SaveNote(full) == " (progress not saved: " + full.ToString() + ")");
  CHECK(SaveNote(InternalError("x"), "not saved") == " (not saved: " + InternalError("x").ToString() + ")");
}

TEST_CASE("a run about one object is reported on it, by resource and handler") {
  WatchedResource resource;
  resource.ref = ResourceRef{"example.com", "v1", "widgets", "ns", ""};
  resource.success_events = true;
  ObjectMeta meta{"u1", "ns", "w1", "7", false};
  ReportSubject subject = ObjectSubject(resource, meta, "update");
  CHECK(subject.event_resource.Id() == resource.ref.Id());
  CHECK(subject.event_object.uid == "u1");
  CHECK(subject.event_handler == "update");
  CHECK(subject.resource_id == resource.ref.Id());
  CHECK(subject.handler == "update");
  CHECK(subject.success_events);
  REQUIRE(subject.identity.size() == 3);
  CHECK(subject.identity[0].key == "object");
  CHECK(subject.identity[0].value == "ns/w1");
  CHECK(subject.identity[1].key == "uid");
  CHECK(subject.identity[1].value == "u1");
  CHECK(subject.identity[2].key == "handler");
  CHECK(subject.identity[2].value == "update");
}
