// What the singleton reconcile tests share: a leadership to lead and lose at will, widgets with
// the handled annotation, finalizers and deletion, and one agent's reconciler over a fake client,
// a fake runner and an in-memory store.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include <unistd.h>

#include "agent/election/singleton_gate.h"
#include "agent/finalizers/singleton_finalizer.h"
#include "agent/object/essence.h"
#include "agent/reconcile/reconciler.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/gated_runner.h"

namespace nodehook::test {

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

// A widget, optionally carrying the handled-state annotation, finalizers (a JSON list) and a
// deletion timestamp.
inline ObjectPtr Widget(int size, const std::string& handled = "", const std::string& finalizers = "",
                        bool deleting = false) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {"u1", "ns", "w1", std::to_string(size), deleting};
  std::string annotations =
      handled.empty() ? "" : R"(,"annotations":{")" + std::string(kSingletonHandledAnnotation) + R"(":")" + handled + R"("})";
  if (!finalizers.empty()) annotations += R"(,"finalizers":)" + finalizers;
  if (deleting) annotations += R"(,"deletionTimestamp":"2026-12-01T00:00:00Z")";
  o->json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","uid":"u1",)"
            R"("resourceVersion":")" + std::to_string(size) + "\"" + annotations + R"(},"spec":{"size":)" +
            std::to_string(size) + "}}";
  return o;
}

inline WatchedResource Singleton() {
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
inline std::string DigestOf(const ObjectPtr& object) {
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
  NoFinalizers no_finalizers;
  SingletonFinalizer singleton_finalizer{client};
  FinalizerSteps* finalizers = &no_finalizers;  // tests of the finalizer point it at singleton_finalizer
  WatchedResource resource = Singleton();

  ~Fixture() { std::filesystem::remove_all(work_dir); }
  static SingletonGateOptions GateOptions() {
    SingletonGateOptions o;
    o.fence = {"/fence", "--"};
    o.delete_window = std::chrono::seconds(30);
    return o;
  }
  std::optional<Duration> Reconcile() {
    return reconciler.Reconcile(ResourceContext{resource, cache, targeting, *finalizers, gate, true}, "u1", stop);
  }
};

}  // namespace nodehook::test
