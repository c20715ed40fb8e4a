// The settled resourceVersion (object_cache.h, SettledState): the latest object state that left nothing to do
// on this node, which `kubectl nodehook wait` compares with the live object.
#include <catch2/catch.hpp>

#include "test/agent/reconcile/reconciler_fixture.h"

namespace nodehook {
namespace {

std::string SettledVersion(const Fixture& f, const std::string& uid) {
  std::optional<SettledState> settled = f.cache.Settled(uid);
  return settled ? settled->resource_version : "";
}

TEST_CASE("an object settles at the resourceVersion its hook handled, and moves with unchanged states") {
  Fixture f;
  auto r = Resource({"create", "update"});
  f.cache.Upsert(Widget("u1", "1", 1));
  CHECK(SettledVersion(f, "u1").empty());
  f.Reconcile(r, "u1");
  CHECK(SettledVersion(f, "u1") == "1");
  f.cache.Upsert(Widget("u1", "2", 1, "Degraded"));  // status only: nothing to run, still settled
  f.Reconcile(r, "u1");
  CHECK(SettledVersion(f, "u1") == "2");
}

TEST_CASE("a failing hook does not settle the new state; its success does") {
  Fixture f;
  auto r = f.Created(Resource({"create", "update"}));
  f.runner.QueueExitCodes({1});
  f.cache.Upsert(Widget("u1", "2", 2));
  auto again = f.Reconcile(r, "u1");
  REQUIRE(again.has_value());
  CHECK(SettledVersion(f, "u1") == "1");
  f.clock.Advance(*again);
  f.Reconcile(r, "u1");
  CHECK(SettledVersion(f, "u1") == "2");
}

TEST_CASE("a deleted object is no longer settled anywhere") {
  Fixture f;
  auto r = f.Created(Resource({"create", "delete"}));
  REQUIRE(SettledVersion(f, "u1") == "1");
  f.cache.MarkGone("u1", Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
  CHECK(SettledVersion(f, "u1").empty());
}

}  // namespace
}  // namespace nodehook
