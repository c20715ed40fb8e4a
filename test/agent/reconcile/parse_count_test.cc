// One parse per object version: each version the watch path caches is read once into its
// ObjectFacts, and nothing after it (Decide, targeting, the finalizer keeper, the singleton gate)
// parses the object again. Counted with FactsReadCount(), which every full read of an object's
// JSON goes through.
#include <catch2/catch.hpp>

#include "agent/finalizers/finalizer_keeper.h"
#include "agent/targeting/kube_node_targeting.h"
#include "test/agent/reconcile/reconciler_fixture.h"

using namespace nodehook;

namespace {

// Parses during `fn`.
template <typename Fn>
uint64_t ParsesDuring(Fn fn) {
  uint64_t before = FactsReadCount();
  fn();
  return FactsReadCount() - before;
}

}  // namespace

TEST_CASE("a plain resource's create and update parse each version once") {
  Fixture f;
  auto r = Resource({"create", "update"});
  CHECK(ParsesDuring([&] {
          f.cache.Upsert(Widget("u1", "1", 1));
          f.Reconcile(r, "u1");
        }) == 1);
  CHECK(ParsesDuring([&] {
          f.cache.Upsert(Widget("u1", "2", 2));
          f.Reconcile(r, "u1");
        }) == 1);
  CHECK(f.LastReason() == "update");
  CHECK(ParsesDuring([&] { f.cache.Upsert(Widget("u1", "2", 2)); }) == 0);  // the same version again
}

TEST_CASE("finalizer mode and node targeting read the same one parse") {
  Fixture f;
  FakeKubeClient client;
  FinalizerKeeper keeper(client, "node-a", nullptr);
  NodeLabels labels;
  labels.Set({{"zone", "a"}});
  KubeNodeTargeting targeting(labels);
  f.finalizers = &keeper;
  f.targeting = &targeting;
  auto r = Resource({"create", "update", "delete"});
  r.finalizer = true;
  r.node_selector_path = "spec.nodeSelector";
  ObjectCache cache{FactsSpecOf(r)};
  auto update = [&](const std::string& rv, int size) {
    cache.Upsert(WithFinalizers(Widget("u1", rv, size), R"(["nodehook.io/node-a"])", false));
    return f.reconciler->Reconcile(f.Context(r, cache), "u1", f.stop);
  };
  CHECK(ParsesDuring([&] { update("1", 1); }) == 1);
  CHECK(ParsesDuring([&] { update("2", 2); }) == 1);
  CHECK(f.LastReason() == "update");
}
