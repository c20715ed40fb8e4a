// The singleton finalizer: the leader claims nodehook.io/singleton before the first hook of an
// object and removes it only after the delete hook succeeded, so a delete owed by any leader's
// hook is owed to every later leader, whatever became of the annotation write, the leader or
// its term.
#include <catch2/catch.hpp>

#include <thread>

#include "agent/election/singleton_progress.h"
#include "test/agent/election/singleton_fixture.h"
#include "test/fakes/captured_log.h"

using namespace nodehook;
using namespace nodehook::test;

namespace {

const std::string kHeld = R"(["nodehook.io/singleton"])";

template <typename Runner>
void UseFinalizer(Fixture<Runner>& f) {
  f.finalizers = &f.singleton_finalizer;
  f.leadership.Lead();
}

bool Adds(const FakeKubeClient::PatchCall& p) {
  return p.type == PatchType::kJson && p.body.find(R"("op":"add")") != std::string::npos &&
         p.body.find("nodehook.io/singleton") != std::string::npos;
}

bool Removes(const FakeKubeClient::PatchCall& p) {
  return p.type == PatchType::kJson && p.body.find(R"("op":"replace","path":"/metadata/finalizers","value":[])") !=
                                           std::string::npos;
}

}  // namespace

TEST_CASE("the leader claims the singleton finalizer before the first hook and writes the annotation after it") {
  Fixture<FakeRunner> f;
  UseFinalizer(f);
  size_t patches_at_run = 0;
  f.runner.OnRun([&](const ActionRequest&) { patches_at_run = f.client.patches().size(); });
  f.cache.Upsert(Widget(1));
  CHECK_FALSE(f.Reconcile());
  REQUIRE(f.runner.call_count() == 1);
  CHECK(patches_at_run == 1);
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 2);
  CHECK(Adds(patches[0]));
  CHECK(patches[1].type == PatchType::kMerge);
  CHECK(SingletonHandledDigest(patches[1].body) == DigestOf(Widget(1)));
}

TEST_CASE("no singleton hook starts while the finalizer cannot be claimed") {
  Fixture<FakeRunner> f;
  UseFinalizer(f);
  f.client.QueuePatchResult(Status(StatusCode::kUnavailable, "cut off"));
  f.cache.Upsert(Widget(1));
  CHECK(f.Reconcile());  // looked at again later
  CHECK(f.runner.call_count() == 0);
}

TEST_CASE("an update of an object holding the finalizer writes only the annotation") {
  Fixture<FakeRunner> f;
  UseFinalizer(f);
  f.cache.Upsert(Widget(1, "", kHeld));
  f.Reconcile();
  f.cache.Upsert(Widget(2, DigestOf(Widget(1)), kHeld));
  f.Reconcile();
  CHECK(f.runner.call_count() == 2);
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 2);
  CHECK(patches[0].type == PatchType::kMerge);
  CHECK(patches[1].type == PatchType::kMerge);
}

TEST_CASE("a failed annotation write is logged, a 404 too, and the next leader still owes the delete") {
  CapturedLog log;
  {
    Fixture<FakeRunner> old_leader;
    UseFinalizer(old_leader);
    old_leader.client.QueuePatchResult(Status::Ok());                                 // the claim
    old_leader.client.QueuePatchResult(Status(StatusCode::kNotFound, "HTTP 404"));  // cut off, then gone
    old_leader.cache.Upsert(Widget(1));
    CHECK_FALSE(old_leader.Reconcile());
    CHECK(old_leader.runner.call_count() == 1);
    CHECK(log.Count("singleton progress not written") == 1);
  }
  // The object was deleted meanwhile; the finalizer holds it, without the annotation.
  Fixture<FakeRunner> next;
  UseFinalizer(next);
  next.cache.Upsert(Widget(1, "", kHeld, true));
  CHECK_FALSE(next.Reconcile());
  REQUIRE(next.runner.call_count() == 1);
  CHECK(FakeRunner::Env(next.runner.calls()[0], "NODEHOOK_REASON") == "delete");
  auto patches = next.client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(Removes(patches[0]));
  CHECK_FALSE(next.store->GetObject("u1").value().has_value());
}

TEST_CASE("a delete stopped with its leader's term keeps the finalizer, and the next leader runs it") {
  Fixture<GatedRunner> old_leader;
  UseFinalizer(old_leader);
  old_leader.cache.Upsert(Widget(1, DigestOf(Widget(1)), kHeld, true));
  std::thread worker([&] { (void)old_leader.Reconcile(); });
  REQUIRE(old_leader.runner.WaitForStarts(1, std::chrono::seconds(10)));
  old_leader.leadership.Lose();
  worker.join();
  CHECK(old_leader.client.patches().empty());  // the finalizer stays

  Fixture<FakeRunner> next;
  UseFinalizer(next);
  next.cache.Upsert(Widget(1, DigestOf(Widget(1)), kHeld, true));
  CHECK_FALSE(next.Reconcile());
  REQUIRE(next.runner.call_count() == 1);
  CHECK(FakeRunner::Env(next.runner.calls()[0], "NODEHOOK_REASON") == "delete");
  REQUIRE(next.client.patches().size() == 1);
  CHECK(Removes(next.client.patches()[0]));
  // The annotation goes in the same patch, so the object's last state owes no second delete.
  CHECK(next.client.patches()[0].body.find(R"("op":"remove","path":"/metadata/annotations/nodehook.io~1singleton-handled")") !=
        std::string::npos);
  next.cache.MarkGone("u1", Widget(2, "", "", true));  // the release made a new version
  CHECK_FALSE(next.Reconcile());
  CHECK(next.runner.call_count() == 1);
}

TEST_CASE("a failed delete hook keeps the finalizer until a run succeeds") {
  Fixture<FakeRunner> f;
  UseFinalizer(f);
  f.runner.QueueExitCodes({1});
  f.cache.Upsert(Widget(1, "", kHeld, true));
  CHECK(f.Reconcile());  // a retry
  CHECK(f.client.patches().empty());
  f.clock.Advance(std::chrono::minutes(10));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 2);
  REQUIRE(f.client.patches().size() == 1);
  CHECK(Removes(f.client.patches()[0]));
}

TEST_CASE("an object a leader handled before the finalizer existed gets it, without a hook") {
  Fixture<FakeRunner> f;
  f.leadership.Lead();
  f.cache.Upsert(Widget(1));
  f.Reconcile();  // the version without the finalizer
  f.cache.Upsert(Widget(1, DigestOf(Widget(1))));
  UseFinalizer(f);  // the upgrade
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 1);
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 2);
  CHECK(Adds(patches[1]));
}

TEST_CASE("a follower neither claims nor releases the singleton finalizer") {
  Fixture<FakeRunner> f;
  f.finalizers = &f.singleton_finalizer;
  f.cache.Upsert(Widget(1, "", kHeld, true));
  CHECK_FALSE(f.Reconcile());
  CHECK(f.runner.call_count() == 0);
  CHECK(f.client.patches().empty());
}
