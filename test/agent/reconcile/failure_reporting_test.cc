// What the Reconciler tells the EventRecorder about failing handlers (every failure, the
// recovery, the permanent failure), and how an explicit retry revives a permanent failure.
#include <catch2/catch.hpp>

#include "agent/reconcile/reconciler.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/report_log.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/reconciler_parts.h"

using namespace nodehook;

namespace {

ObjectPtr Gadget(const std::string& uid, int size) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "g-" + uid, std::to_string(size), false};
  o->json = R"({"metadata":{"name":"g-)" + uid + R"(","uid":")" + uid + R"("},"spec":{"size":)" +
            std::to_string(size) + "}}";
  return o;
}

struct Setup : ReconcilerParts {
  ReportLog events;
  WatchedResource gadgets;
  std::unique_ptr<BackoffRetryPolicy> policy;
  OutcomeReporter reporter{nullptr, events};
  std::unique_ptr<Reconciler> reconciler;
  EveryNode targeting;
  NoFinalizers finalizers;
  OpenGate gate;

  explicit Setup(int retry_limit = 0) {
    RetryOptions retry;
    retry.limit = retry_limit;
    policy = std::make_unique<BackoffRetryPolicy>(clock, retry);
    reconciler = std::make_unique<Reconciler>(*store, runner, clock, *policy, reporter,
                                              ReconcilerOptions{"node-a", work_dir});
    gadgets.ref = {"example.com", "v1", "gadgets", "", ""};
    gadgets.hooks["create"] = HookSpec{{"/hooks/create"}, std::chrono::seconds(5)};
    cache.Upsert(Gadget("u1", 1));
  }

  // Runs whatever is due now, then lets the retry delay pass.
  std::optional<Duration> Step() {
    auto again = reconciler->Reconcile(ResourceContext{gadgets, cache, targeting, finalizers, gate}, "u1", stop);
    if (again) clock.Advance(*again);
    return again;
  }
  std::string Outcome() { return (*store->GetHandler("u1", "create"))->last_outcome; }
};

}  // namespace

TEST_CASE("every failure of a handler is reported with its attempt number, and its success as a recovery") {
  Setup s;
  s.runner.QueueExitCodes({1, 1, 1, 0});
  for (int i = 0; i < 4; ++i) s.Step();
  CHECK(s.events.reports == std::vector<std::string>{"failing create 1: exited 1", "failing create 2: exited 1",
                                                     "failing create 3: exited 1", "recovered create 3"});
}

TEST_CASE("a handler that never failed reports no recovery, and in progress is no failure") {
  Setup s;
  s.runner.QueueExitCodes({100, 0});
  s.Step();
  s.Step();
  CHECK(s.runner.call_count() == 2);
  CHECK(s.events.reports.empty());
}

TEST_CASE("a permanent failure is reported as such, not as one more failing attempt") {
  Setup s(/*retry_limit=*/2);
  s.runner.QueueExitCodes({1, 1});
  s.Step();
  CHECK_FALSE(s.Step());
  CHECK(s.events.reports == std::vector<std::string>{"failing create 1: exited 1", "permanent create"});
}

TEST_CASE("an explicit retry revives a permanent failure: it runs once more and gives up again if it fails") {
  Setup s(/*retry_limit=*/2);
  s.runner.QueueExitCodes({1, 1, 1});
  s.Step();
  s.Step();
  REQUIRE(s.Outcome() == kOutcomePermanentFailure);
  CHECK_FALSE(s.Step());  // given up: nothing runs
  REQUIRE(s.runner.call_count() == 2);

  REQUIRE(s.store->RequestRetry("u1", "", ToMillis(s.clock.Now())).ok());
  CHECK_FALSE(s.Step());  // the one more run fails: given up again, no retry scheduled
  CHECK(s.runner.call_count() == 3);
  CHECK(FakeRunner::Env(s.runner.calls().back(), "NODEHOOK_RETRY") == "2");
  CHECK(s.Outcome() == kOutcomePermanentFailure);
  CHECK_FALSE(s.Step());
  CHECK(s.runner.call_count() == 3);

  REQUIRE(s.store->RequestRetry("u1", "create", ToMillis(s.clock.Now())).ok());
  CHECK_FALSE(s.Step());  // this time it succeeds: the diffbase is stored, the failure is over
  CHECK(s.runner.call_count() == 4);
  CHECK((*s.store->GetObject("u1")).has_value());
  CHECK_FALSE((*s.store->GetHandler("u1", "create")).has_value());
  CHECK(s.events.reports.back() == "recovered create 3");
}
