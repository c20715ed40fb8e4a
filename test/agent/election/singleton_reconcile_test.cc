// The reconciler's part of cluster-singleton resources: hooks only under a leadership term, the
// handled state written onto the object for the next leader, adoption of what the previous leader
// handled, and hooks stopped when the term ends.
#include <catch2/catch.hpp>

#include <thread>

#include "agent/election/singleton_progress.h"
#include "test/agent/election/singleton_fixture.h"

using namespace nodehook;
using namespace nodehook::test;

TEST_CASE("a singleton hook never runs on an agent that does not lead") {
  Fixture<FakeRunner> f;
  f.cache.Upsert(Widget(1));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 0);
  CHECK(f.client.patches().empty());
}

TEST_CASE("the leader runs a singleton hook behind the fence and writes the handled state onto the object") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  auto widget = Widget(1);
  f.cache.Upsert(widget);
  CHECK_FALSE(f.Reconcile());
  REQUIRE(f.runner.call_count() == 1);
  CHECK(f.runner.calls()[0].argv == std::vector<std::string>{"/fence", "--", "/hooks/create"});
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].name == "w1");
  CHECK(patches[0].type == PatchType::kMerge);
  CHECK(SingletonHandledDigest(patches[0].body) == DigestOf(widget));
}

TEST_CASE("writing the annotation is not a change: the next look at the object runs nothing") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  auto widget = Widget(1);
  f.cache.Upsert(widget);
  f.Reconcile();
  f.cache.Upsert(Widget(1, DigestOf(widget)));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 1);
}

TEST_CASE("a new leader adopts what the previous leader handled, without running the hook") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(1, DigestOf(Widget(1))));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 0);
  CHECK(f.store->GetObject("u1").value().has_value());
  // A later change is an update against the adopted state.
  f.cache.Upsert(Widget(2, DigestOf(Widget(1))));
  f.Reconcile();
  REQUIRE(f.runner.call_count() == 1);
  CHECK(FakeRunner::Env(f.runner.calls()[0], "NODEHOOK_REASON") == "update");
}

TEST_CASE("a new leader runs the hook for a state the previous leader had not handled") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(2, DigestOf(Widget(1))));
  f.Reconcile();
  CHECK(f.runner.call_count() == 1);
}

TEST_CASE("the deletion of an object another leader handled runs the delete hook on the new leader") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.MarkGone("u1", Widget(1, DigestOf(Widget(1))));
  CHECK_FALSE(f.Reconcile());
  REQUIRE(f.runner.call_count() == 1);
  CHECK(FakeRunner::Env(f.runner.calls()[0], "NODEHOOK_REASON") == "delete");
  CHECK_FALSE(f.cache.Get("u1"));
}

TEST_CASE("an agent that does not lead keeps a deletion for the window, then forgets it") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(1));
  f.Reconcile();
  f.leadership.Lose();
  f.cache.MarkGone("u1", Widget(1, DigestOf(Widget(1))));
  CHECK(f.Reconcile() == std::chrono::seconds(30));
  f.clock.Advance(std::chrono::seconds(29));
  CHECK(f.Reconcile() == std::chrono::seconds(1));
  CHECK(f.cache.Get("u1"));
  f.clock.Advance(std::chrono::seconds(1));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 1);  // only the create: the delete was the leader's
  CHECK_FALSE(f.cache.Get("u1"));
  CHECK_FALSE(f.store->GetObject("u1").value().has_value());
}

TEST_CASE("a deletion the fallen leader did not handle runs on the agent that leads next") {
  Fixture<FakeRunner> f;
  f.cache.MarkGone("u1", Widget(1, DigestOf(Widget(1))));
  CHECK(f.Reconcile());  // kept
  f.clock.Advance(std::chrono::seconds(10));
  f.leadership.Lead();
  CHECK_FALSE(f.Reconcile());
  REQUIRE(f.runner.call_count() == 1);
  CHECK(FakeRunner::Env(f.runner.calls()[0], "NODEHOOK_REASON") == "delete");
  CHECK_FALSE(f.cache.Get("u1"));
}

TEST_CASE("a singleton hook running when the term ends is stopped and recorded as interrupted") {
  Fixture<GatedRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(1));
  std::optional<Duration> again = Duration(-1);
  std::thread worker([&] { again = f.Reconcile(); });
  REQUIRE(f.runner.WaitForStarts(1, std::chrono::seconds(10)));
  f.leadership.Lose();
  worker.join();
  CHECK_FALSE(again);
  CHECK(f.runner.cancelled() == 1);
  CHECK(f.client.patches().empty());
  auto progress = f.store->GetHandler("u1", "create").value();
  REQUIRE(progress);
  CHECK(progress->last_outcome == "interrupted");
}

TEST_CASE("a singleton hook that the fence killed after the term ended is interrupted, not a failure") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(1));
  f.runner.QueueExitCodes({143});
  f.runner.OnRun([&](const ActionRequest&) { f.leadership.Lose(); });  // the agent was paused meanwhile
  CHECK_FALSE(f.Reconcile());
  auto progress = f.store->GetHandler("u1", "create").value();
  REQUIRE(progress);
  CHECK(progress->last_outcome == "interrupted");
  CHECK(progress->retries == 0);
}
