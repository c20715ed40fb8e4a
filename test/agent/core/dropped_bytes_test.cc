// The reconciler with an ObjectCache that drops a handled object's bytes: decisions and hook
// inputs stay what they were with whole objects, the diffbase standing in for the bytes.
#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

#include "agent/core/reconciler.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_runner.h"

using namespace nodehook;

namespace {

ObjectPtr Widget(const std::string& uid, const std::string& rv, int size) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "w-" + uid, rv, false};
  o->json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-)" + uid +
            R"(","namespace":"ns","uid":")" + uid + R"(","resourceVersion":")" + rv + R"("},"spec":{"size":)" +
            std::to_string(size) + "}}";
  return o;
}

WatchedResource Resource() {
  WatchedResource r;
  r.ref = {"example.com", "v1", "widgets", "", ""};
  for (const char* reason : {kReasonCreate, kReasonUpdate, kReasonDelete}) {
    r.hooks[reason] = HookSpec{{std::string("/hooks/") + reason}, std::chrono::seconds(5)};
  }
  return r;
}

struct Fixture {
  FakeClock clock;
  FakeRunner runner;
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ObjectCache cache;
  CancelToken stop;
  std::string work_dir = "/tmp/nodehook-dropped-bytes-test-" + std::to_string(::getpid());
  Reconciler reconciler{*store, runner, clock, [this] {
                          ReconcilerOptions o;
                          o.node_name = "node-a";
                          o.work_dir = work_dir;
                          return o;
                        }()};

  ~Fixture() { std::filesystem::remove_all(work_dir); }
  void Reconcile(const WatchedResource& r, const std::string& uid) { (void)reconciler.Reconcile(r, cache, uid, stop); }
  std::string LastReason() { return FakeRunner::Env(runner.calls().back(), "NODEHOOK_REASON"); }
};

}  // namespace

TEST_CASE("a handled object keeps only its metadata in the cache") {
  Fixture f;
  auto r = Resource();
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
  REQUIRE(f.runner.call_count() == 1);
  REQUIRE(f.cache.with_bytes() == 0);
  REQUIRE(f.cache.Get("u1")->handled_meta);
}

TEST_CASE("an object without its bytes is reconciled again without running a hook") {
  Fixture f;
  auto r = Resource();
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
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
  auto r = Resource();
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
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
