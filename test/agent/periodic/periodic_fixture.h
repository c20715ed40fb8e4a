// A node's pieces for periodic check and snapshot tests: a FakeClock, a FakeRunner, an in-memory
// store, one resource's cache, the agent's retry policy, and a Reconciler (to handle objects first).
#pragma once

#include <memory>
#include <string>

#include "agent/reconcile/reconciler.h"
#include "test/fakes/reconciler_parts.h"

namespace nodehook {

inline ObjectPtr PeriodicWidget(const std::string& uid, const std::string& rv, int size, bool deleting = false) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "w-" + uid, rv, deleting};
  o->json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-)" + uid +
            R"(","namespace":"ns","uid":")" + uid + R"(","resourceVersion":")" + rv + R"("},"spec":{"size":)" +
            std::to_string(size) + R"(}})";
  return o;
}

struct PeriodicFixture : ReconcilerParts {
  BackoffRetryPolicy policy{clock, TestRetryOptions()};
  OutcomeReporter reporter{nullptr, NoEvents()};
  Reconciler reconciler{*store, runner, clock, policy, reporter, ReconcilerOptions{"node-a", work_dir}};
  EveryNode every_node;
  NoFinalizers no_finalizers;
  OpenGate open_gate;

  static WatchedResource Resource(int interval_seconds) {
    WatchedResource r;
    r.ref = {"example.com", "v1", "widgets", "", ""};
    r.hooks[kReasonCreate] = HookSpec{{"/hooks/create"}, std::chrono::seconds(5)};
    HookSpec check{{"/hooks/check"}, std::chrono::seconds(5)};
    check.interval_seconds = interval_seconds;
    check.jitter_percent = 0;
    r.hooks[kReasonCheck] = check;
    return r;
  }
  // Observed and handled (create ran): from now on it may be checked.
  void Handle(const WatchedResource& r, ObjectPtr object) {
    std::string uid = object->meta.uid;
    cache.Upsert(std::move(object));
    reconciler.Reconcile(ResourceContext{r, cache, every_node, no_finalizers, open_gate, KeepsObjectBytes(r)}, uid, stop);
  }
  size_t Runs(const std::string& reason) const {
    size_t n = 0;
    for (const auto& c : runner.calls()) n += FakeRunner::Env(c, "NODEHOOK_REASON") == reason ? 1 : 0;
    return n;
  }
};

}  // namespace nodehook
