// Fakes for `kubectl nodehook rollout|wait` tests: a RolloutCluster held in memory (Leases,
// objects, Node labels, recorded patches) and a board builder. Thread-safe enough for the
// single-threaded commands (one mutex).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/app/rollout_command.h"
#include "agent/base/utc_time.h"
#include "agent/kubectl/rollout_cluster.h"
#include "agent/object/object_facts.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {

class FakeRolloutCluster final : public RolloutCluster {
 public:
  std::vector<RolloutLease> leases;
  std::map<std::string, KubeObject> objects;  // by "namespace/name"
  NodeLabelMap nodes;
  std::vector<KubeObject> cordoned_nodes;  // the Nodes listed with spec.unschedulable=true
  std::vector<std::pair<std::string, std::string>> patches;  // (namespace/name, body)
  std::vector<ObjectRef> gets;
  std::map<std::string, std::string> versions{{"example.com", "v1"}};

  // Through the Leases' JSON, as the API server would hand them over.
  Result<std::vector<RolloutLease>> ListRolloutLeases() override {
    std::vector<RolloutLease> out;
    for (const RolloutLease& l : leases) {
      Result<RolloutLease> parsed = ParseRolloutLease(RolloutLeaseJson("nodehook", RolloutId(l.resource), l));
      if (!parsed.ok()) return parsed.status();
      out.push_back(std::move(parsed).value());
    }
    return out;
  }
  Result<KubeObject> GetObject(const ObjectRef& ref) override {
    gets.push_back(ref);
    auto it = objects.find(ref.namespace_name + "/" + ref.name);
    // Widgets live at /apis/example.com/v1 only.
    if (it == objects.end() || ref.resource.group != "example.com" || ref.resource.version != "v1") return NotFoundError("widgets.example.com \"" + ref.name + "\" not found");
    return it->second;
  }
  Result<NodeLabelMap> NodeLabels() override { return nodes; }
  Result<std::vector<KubeObject>> CordonedNodes() override { return cordoned_nodes; }
  Result<std::string> PreferredVersion(const std::string& group) override {
    auto it = versions.find(group);
    if (it == versions.end()) return NotFoundError("no group " + group);
    return it->second;
  }
  Status MergePatchObject(const ObjectRef& ref, const std::string& body) override {
    patches.emplace_back(ref.namespace_name + "/" + ref.name, body);
    return Status::Ok();
  }
};

// A factory for RolloutDeps::cluster handing out `cluster` itself (borrowed, so the test keeps
// seeing and changing it while the command runs).
inline std::function<Result<std::unique_ptr<RolloutCluster>>(const FleetCommandArgs&, const std::string&)>
BorrowCluster(FakeRolloutCluster* cluster) {
  struct Borrowed final : RolloutCluster {
    FakeRolloutCluster* c;
    explicit Borrowed(FakeRolloutCluster* f) : c(f) {}
    Result<std::vector<RolloutLease>> ListRolloutLeases() override { return c->ListRolloutLeases(); }
    Result<KubeObject> GetObject(const ObjectRef& r) override { return c->GetObject(r); }
    Result<NodeLabelMap> NodeLabels() override { return c->NodeLabels(); }
    Result<std::vector<KubeObject>> CordonedNodes() override { return c->CordonedNodes(); }
    Result<std::string> PreferredVersion(const std::string& g) override { return c->PreferredVersion(g); }
    Status MergePatchObject(const ObjectRef& r, const std::string& b) override { return c->MergePatchObject(r, b); }
  };
  return [cluster](const FleetCommandArgs&, const std::string&) -> Result<std::unique_ptr<RolloutCluster>> {
    return std::unique_ptr<RolloutCluster>(std::make_unique<Borrowed>(cluster));
  };
}

// A fake cluster and clock for a command run: each sleep counts, lets the test change the
// cluster (on_sleep with the count), then advances the clock, so a wait runs instantly.
struct FakeCommandWorld {
  FakeClock clock;
  FakeRolloutCluster cluster;
  int sleeps = 0;
  std::function<void(int)> on_sleep;

  RolloutDeps Deps(FleetSourceFactory fleet) {
    RolloutDeps deps;
    deps.cluster = BorrowCluster(&cluster);
    deps.fleet = std::move(fleet);
    deps.clock = &clock;
    deps.sleep = [this](Duration d) {
      ++sleeps;
      if (on_sleep) on_sleep(sleeps);
      clock.Advance(d);
    };
    return deps;
  }
};

inline const char* kWidgets = "widgets.example.com/v1";

inline std::string WidgetJson(const std::string& ns, const std::string& name, const std::string& uid,
                              const std::string& rv, const std::string& annotations = "{}", int size = 1) {
  return R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","uid":")" + uid + R"(","resourceVersion":")" + rv + R"(","annotations":)" + annotations +
         R"(},"spec":{"size":)" + std::to_string(size) + "}}";
}

inline KubeObject Widget(const std::string& ns, const std::string& name, const std::string& uid,
                         const std::string& rv, const std::string& annotations = "{}") {
  KubeObject o;
  o.meta = ObjectMeta{uid, ns, name, rv, false};
  o.json = WidgetJson(ns, name, uid, rv, annotations);
  return o;
}

inline std::string DigestOf(const KubeObject& o) { return ReadFacts(o.json, FactsSpec{{}, ""})->digest; }

inline std::string PolicyJson(const RolloutPolicy& policy) {
  WatchedResource r;
  r.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
  r.rollout = policy;
  return SharedPolicyJson(r);
}

inline RolloutLease NodeLease(const std::string& node, const RolloutPolicy& policy,
                              std::map<std::string, NodeResult> results = {}) {
  RolloutLease l;
  l.name = NodeLeaseName(RolloutId(kWidgets), node);
  l.kind = "node";
  l.holder = node;
  l.resource = kWidgets;
  l.policy_json = PolicyJson(policy);
  l.results = std::move(results);
  return l;
}

inline RolloutLease SlotLease(int slot, const std::string& holder, const std::string& uid, const std::string& state,
                              NodeStep phase, int64_t renewed_ms, int duration_s = 15) {
  RolloutLease l;
  l.name = SlotLeaseName(RolloutId(kWidgets), slot);
  l.kind = "slot";
  l.slot = slot;
  l.holder = holder;
  l.uid = uid;
  l.state = state;
  l.phase = phase;
  l.resource = kWidgets;
  l.lease_duration_seconds = duration_s;
  l.renew_time = MicroTime(FromMillis(renewed_ms));
  return l;
}

}  // namespace nodehook
