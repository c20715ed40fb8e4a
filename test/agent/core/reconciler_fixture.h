// What the reconciler tests share: sample widgets and resources, and a reconciler on an in-memory
// store with a fake runner and clock. Single-threaded test helpers.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "agent/core/reconciler.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"
#include "test/fakes/fake_runner.h"

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

struct Fixture {
  FakeClock clock;
  FakeRunner runner;
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ObjectCache cache;
  CancelToken stop;
  std::string work_dir = "/tmp/nodehook-reconciler-test-" + std::to_string(::getpid());
  std::unique_ptr<Reconciler> reconciler = MakeReconciler();

  ~Fixture() { std::filesystem::remove_all(work_dir); }

  std::unique_ptr<Reconciler> MakeReconciler() {
    ReconcilerOptions o;
    o.node_name = "node-a";
    o.work_dir = work_dir;
    o.retry_base = Duration(1000);
    o.retry_max = Duration(8000);
    return std::make_unique<Reconciler>(*store, runner, clock, o);
  }
  std::optional<Duration> Reconcile(const WatchedResource& r, const std::string& uid) {
    return reconciler->Reconcile(r, cache, uid, stop);
  }
  std::string LastReason() { return FakeRunner::Env(runner.calls().back(), "NODEHOOK_REASON"); }
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
