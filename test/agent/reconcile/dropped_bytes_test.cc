// The reconciler with an ObjectCache that drops a handled object's bytes: decisions and hook
// inputs stay what they were with whole objects, the diffbase standing in for the bytes.
#include <catch2/catch.hpp>

#include "test/agent/reconcile/reconciler_fixture.h"

using namespace nodehook;

namespace {

WatchedResource Resource() { return nodehook::Resource({kReasonCreate, kReasonUpdate, kReasonDelete}); }

}  // namespace

TEST_CASE("a handled object keeps only its metadata in the cache") {
  Fixture f;
  auto r = f.Created(Resource());
  REQUIRE(f.runner.call_count() == 1);
  REQUIRE(f.cache.with_bytes() == 0);
  REQUIRE(f.cache.Get("u1")->handled_meta);
}

TEST_CASE("an object without its bytes is reconciled again without running a hook") {
  Fixture f;
  auto r = f.Created(Resource());
  f.Reconcile(r, "u1");  // e.g. a retry request or a requeue: the diffbase stands in
  REQUIRE(f.runner.call_count() == 1);
}

TEST_CASE("a deletion after the bytes were dropped gives the delete hook the handled object") {
  Fixture f;
  auto r = Resource();
  f.cache.Upsert(Widget("u1", "1", 7));
  f.Reconcile(r, "u1");
  f.cache.MarkGone("u1", nullptr);  // missing from a relist: no last state from the server
  f.Reconcile(r, "u1");
  REQUIRE(f.runner.call_count() == 2);
  REQUIRE(f.LastReason() == "delete");
  REQUIRE(f.runner.calls().back().stdin_data.find(R"("size":7)") != std::string::npos);
  REQUIRE_FALSE(f.cache.Contains("u1"));
}

TEST_CASE("a change after the bytes were dropped runs the update hook with the old and new object") {
  Fixture f;
  auto r = f.Created(Resource());
  f.cache.Upsert(Widget("u1", "2", 2));
  f.Reconcile(r, "u1");
  REQUIRE(f.LastReason() == "update");
  REQUIRE(f.cache.with_bytes() == 0);
}

TEST_CASE("finalizer mode and node targeting keep whole objects") {
  Fixture f;
  auto r = Resource();
  r.node_selector_path = "spec.nodeSelector";  // no targeting installed: every object matches
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
  REQUIRE(f.runner.call_count() == 1);
  REQUIRE(f.cache.with_bytes() == 1);
}
