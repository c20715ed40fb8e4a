// What the reconciler tests share: sample widgets and resources, and a reconciler on an in-memory
// store with a fake runner and clock, its retry policy, outcome reporter and the resource's modes
// (plain unless a test sets one). Single-threaded test helpers.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "agent/events/event_recorder.h"
#include "agent/reconcile/reconciler.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/reconciler_parts.h"

namespace nodehook {

inline ObjectPtr Widget(const std::string& uid, const std::string& rv, int size, const std::string& phase = "Ready",
                 bool deleting = false) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "w-" + uid, rv, deleting};
  o->json = R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-)" + uid +
            R"(","namespace":"ns","uid":")" + uid + R"(","resourceVersion":")" + rv + R"("},"spec":{"size":)" +
            std::to_string(size) + R"(},"status":{"phase":")" + phase + R"("}})";
  return o;
}

inline WatchedResource Resource(std::vector<std::string> reasons) {
  WatchedResource r;
  r.ref = {"example.com", "v1", "widgets", "", ""};
  for (const auto& reason : reasons) r.hooks[reason] = HookSpec{{"/hooks/" + reason}, std::chrono::seconds(5)};
  return r;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Forwards to the recorder a test names (none by default).
struct EventsRelay final : EventRecorder {
  EventRecorder* target = &NoEvents();
  void PermanentFailure(const ResourceRef& r, const ObjectMeta& o, const std::string& h, const std::string& m) override {
    target->PermanentFailure(r, o, h, m);
  }
  void Succeeded(const ResourceRef& r, const ObjectMeta& o, const std::string& h) override { target->Succeeded(r, o, h); }
  void Failing(const ResourceRef& r, const ObjectMeta& o, const std::string& h, int a, const std::string& m) override {
    target->Failing(r, o, h, a, m);
  }
  void Recovered(const ResourceRef& r, const ObjectMeta& o, const std::string& h, int f) override {
    target->Recovered(r, o, h, f);
  }
  void Quarantined(const ResourceRef& r, const ObjectMeta& o, const std::string& m) override {
    target->Quarantined(r, o, m);
  }
};

struct Fixture : ReconcilerParts {
  BackoffRetryPolicy policy{clock, TestRetryOptions()};
  EventsRelay events;
  OutcomeReporter reporter{nullptr, events};
  std::unique_ptr<Reconciler> reconciler = MakeReconciler();
  // The resource's modes; plain unless a test sets one.
  const NodeTargeting* targeting = &EveryNodeTargeting();
  NoFinalizers no_finalizers;
  FinalizerSteps* finalizers = &no_finalizers;
  OpenGate open_gate;
  HookGate* gate = &open_gate;

  std::unique_ptr<Reconciler> MakeReconciler() {
    return std::make_unique<Reconciler>(*store, runner, clock, policy, reporter,
                                        ReconcilerOptions{"node-a", work_dir});
  }
  // A new agent process on the same state file: a new reconciler, and a cache whose first list
  // holds the same objects with nothing settled since the start.
  void Restart() {
    reconciler = MakeReconciler();
    for (const std::string& uid : cache.Uids()) cache.Unsettle(uid);
  }
  ResourceContext Context(const WatchedResource& r, ObjectCache& objects) {
    return ResourceContext{r, objects, *targeting, *finalizers, *gate, KeepsObjectBytes(r)};
  }
  std::optional<Duration> Reconcile(const WatchedResource& r, const std::string& uid) {
    return reconciler->Reconcile(Context(r, cache), uid, stop);
  }
  std::string LastReason() { return FakeRunner::Env(runner.calls().back(), "NODEHOOK_REASON"); }
  // The object u1 (resourceVersion 1, generation 1) listed and reconciled once for `r`; returns `r`.
  WatchedResource Created(WatchedResource r) {
    cache.Upsert(Widget("u1", "1", 1));
    Reconcile(r, "u1");
    return r;
  }
};


// A copy of `o` carrying `finalizers_json` (a JSON array), with a deletion timestamp when `deleting`.
inline ObjectPtr WithFinalizers(ObjectPtr o, const std::string& finalizers_json, bool deleting) {
  auto copy = std::make_shared<KubeObject>(*o);
  copy->meta.deleting = deleting;
  std::string meta = R"("metadata":{)";
  copy->json.replace(copy->json.find(meta), meta.size(),
                     meta + R"("finalizers":)" + finalizers_json + "," +
                         (deleting ? R"("deletionTimestamp":"2026-11-29T17:00:00Z",)" : ""));
  return copy;
}

}  // namespace nodehook
