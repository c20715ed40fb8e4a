// The reconciler's part of cluster-singleton resources: hooks only under a leadership term, the
// handled state written onto the object for the next leader, adoption of what the previous leader
// handled, and hooks stopped when the term ends.
#include <catch2/catch.hpp>

#include <filesystem>
#include <thread>

#include <unistd.h>

#include "agent/object/essence.h"
#include "agent/election/singleton_gate.h"
#include "agent/reconcile/reconciler.h"
#include "agent/election/singleton_progress.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/gated_runner.h"

using namespace nodehook;

namespace {

class FakeLeadership final : public Leadership {
 public:
  std::shared_ptr<const CancelToken> TermIfMayStart() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return term_;
  }
  void Lead() {
    std::lock_guard<std::mutex> lock(mu_);
    term_ = std::make_shared<CancelToken>();
  }
  void Lose() {
    std::shared_ptr<CancelToken> ended;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended.swap(term_);
    }
    if (ended) ended->Cancel();
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<CancelToken> term_;
};

// A widget, optionally carrying the handled-state annotation.
ObjectPtr Widget(int size, const std::string& handled = "") {
  auto o = std::make_shared<KubeObject>();
  o->meta = {"u1", "ns", "w1", std::to_string(size), false};
  std::string annotations =
      handled.empty() ? "" : R"(,"annotations":{")" + std::string(kSingletonHandledAnnotation) + R"(":")" + handled + R"("})";
  o->json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","uid":"u1",)"
            R"("resourceVersion":")" + std::to_string(size) + "\"" + annotations + R"(},"spec":{"size":)" +
            std::to_string(size) + "}}";
  return o;
}

WatchedResource Singleton() {
  WatchedResource r;
  r.ref = {"example.com", "v1", "widgets", "", ""};
  r.singleton = true;
  r.ignored_paths = {std::string("metadata.annotations.") + kSingletonHandledAnnotation};
  for (const char* reason : {"create", "update", "delete"}) {
    r.hooks[reason] = HookSpec{{std::string("/hooks/") + reason}, std::chrono::seconds(5)};
  }
  return r;
}

// The digest the reconciler writes for `object` once handled.
std::string DigestOf(const ObjectPtr& object) {
  return EssenceDigest(ComputeEssence(object->json, Singleton().ignored_paths).value());
}

template <typename Runner>
struct Fixture {
  FakeClock clock;
  Runner runner;
  FakeKubeClient client;
  FakeLeadership leadership;
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ObjectCache cache{FactsSpecOf(Singleton())};
  CancelToken stop;
  std::string work_dir = "/tmp/nodehook-singleton-test-" + std::to_string(::getpid());
  BackoffRetryPolicy policy{clock, RetryOptions{}};
  OutcomeReporter reporter{nullptr, NoEvents()};
  Reconciler reconciler{*store, runner, clock, policy, reporter, ReconcilerOptions{"node-a", work_dir}};
  SingletonGate gate{leadership, client, *store, clock, GateOptions()};
  EveryNode targeting;
  NoFinalizers finalizers;
  WatchedResource resource = Singleton();

  ~Fixture() { std::filesystem::remove_all(work_dir); }
  static SingletonGateOptions GateOptions() {
    SingletonGateOptions o;
    o.fence = {"/fence", "--"};
    o.delete_window = std::chrono::seconds(30);
    return o;
  }
  std::optional<Duration> Reconcile() {
    return reconciler.Reconcile(ResourceContext{resource, cache, targeting, finalizers, gate}, "u1", stop);
  }
};

}  // namespace

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
