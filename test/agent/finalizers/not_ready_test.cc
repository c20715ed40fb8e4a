// Nodes that are gone but not deleted (issue 25, item 4): with finalizer_release_not_ready_seconds,
// a node whose Node has not been Ready that long loses its finalizers on deleting objects, even
// though its agent pod stays bound. Judged from the Node watch, timed on the injected clock,
// always confirmed by a fresh read; a Node without a Ready condition is never taken as NotReady.
#include <catch2/catch.hpp>

#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/finalizer_keeper.h"
#include "agent/finalizers/node_roster.h"
#include "test/agent/reconcile/reconciler_fixture.h"
#include "test/fakes/captured_log.h"

using namespace nodehook;

namespace {

constexpr Duration kNotReadyAfter = std::chrono::hours(2);

ObjectPtr NodeObject(const std::string& name, const char* ready) {
  auto n = std::make_shared<KubeObject>();
  n->meta.name = name;
  n->meta.uid = "uid-" + name;
  n->json = R"({"kind":"Node","metadata":{"name":")" + name + R"("})" +
            (ready ? std::string(R"(,"status":{"conditions":[{"type":"MemoryPressure","status":"False"},)") +
                         R"({"type":"Ready","status":")" + ready + R"("}]})"
                   : std::string()) +
            "}";
  return n;
}

struct Released {
  std::string finalizer, reason;
};

struct ReleaseEvents final : EventRecorder {
  std::vector<Released> released;
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void FinalizerReleased(const ResourceRef&, const ObjectMeta&, const std::string& f, const std::string& why) override {
    released.push_back({f, why});
  }
};

// Finalizer mode on node-a; node-b's agent pod stays bound throughout (a node powered off keeps
// it), so only the NotReady rule can release node-b's finalizer.
struct NotReadyFixture : Fixture {
  FakeKubeClient client;
  NodeRoster nodes{&clock};
  AgentPodRoster pods{clock, std::chrono::seconds(600)};
  ReleaseEvents events;
  FinalizerKeeper keeper{client,
                         "node-a",
                         &nodes,
                         AgentWatch{&pods, ResourceRef{"", "v1", "pods", "nodehook", "nodehook.io/agent"},
                                    [] { return true; }, &clock},
                         &events,
                         NotReadyRule{kNotReadyAfter, &clock}};
  WatchedResource resource = Resource({"create", "delete"});
  std::vector<std::string> due;

  NotReadyFixture() {
    nodes.OnListed({NodeObject("node-a", "True"), NodeObject("node-b", "True")}, {});
    client.PutObject(*NodeObject("node-a", "True"));
    client.PutObject(*NodeObject("node-b", "True"));
    nodes.SetOnDeparted([this](const std::string& n) { due.push_back(n); });
    auto pod = std::make_shared<KubeObject>();
    pod->meta.uid = "pb";
    pod->json = R"({"kind":"Pod","spec":{"nodeName":"node-b"}})";
    pods.OnListed({pod}, {});
    resource.finalizer = true;
    finalizers = &keeper;
    cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-b","x"])", true));
  }
  void NodeB(const char* ready) {
    nodes.OnObject(NodeObject("node-b", ready));
    client.PutObject(*NodeObject("node-b", ready));
  }
};

}  // namespace

TEST_CASE("a Node's readiness: only a Ready condition that is not True says NotReady") {
  CHECK(NodeNotReady(NodeObject("n", "False")->json));
  CHECK(NodeNotReady(NodeObject("n", "Unknown")->json));
  CHECK_FALSE(NodeNotReady(NodeObject("n", "True")->json));
  CHECK_FALSE(NodeNotReady(NodeObject("n", nullptr)->json));  // no kubelet has reported: not judged
  CHECK_FALSE(NodeNotReady("not json"));
}

TEST_CASE("a node NotReady for the set time loses its finalizer though its agent pod stays bound") {
  NotReadyFixture f;
  CapturedLog log;
  f.NodeB("Unknown");  // the node controller's mark for a kubelet that stopped reporting
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());  // not yet

  f.clock.Advance(kNotReadyAfter - std::chrono::seconds(1));
  f.nodes.FireDue(f.clock.Now(), kNotReadyAfter);
  CHECK(f.due.empty());
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());
  f.clock.Advance(std::chrono::seconds(1));
  f.nodes.FireDue(f.clock.Now(), kNotReadyAfter);
  f.nodes.FireDue(f.clock.Now(), kNotReadyAfter);
  CHECK(f.due == std::vector<std::string>{"node-b"});  // once: the requeue trigger

  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  REQUIRE(f.client.patches().size() == 1);
  CHECK(f.client.patches()[0].body.find(R"("value":["x"])") != std::string::npos);
  REQUIRE(f.events.released.size() == 1);
  CHECK(f.events.released[0].finalizer == "nodehook.io/node-b");
  CHECK(f.events.released[0].reason.find("has not been Ready for 7200s") != std::string::npos);
  CHECK(log.Count("unready node's finalizer removed") == 1);
}

TEST_CASE("a NotReady node that is Ready again, by the watch or by the fresh read, keeps its finalizer") {
  NotReadyFixture f;
  f.NodeB("False");
  f.clock.Advance(kNotReadyAfter / 2);
  f.NodeB("True");  // back: the wait starts over when it goes NotReady again
  f.NodeB("False");
  f.clock.Advance(kNotReadyAfter / 2 + std::chrono::seconds(1));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());

  f.clock.Advance(kNotReadyAfter);
  // The watch lags: the Node is Ready by a fresh read.
  f.client.PutObject(*NodeObject("node-b", "True"));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());
  CHECK(f.events.released.empty());
}

TEST_CASE("without the NotReady rule, a NotReady node keeps its finalizer however long") {
  NotReadyFixture f;
  FinalizerKeeper off{f.client, "node-a", &f.nodes, AgentWatch{}, &f.events};
  f.finalizers = &off;
  f.NodeB("False");
  f.clock.Advance(std::chrono::hours(24 * 365));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());
}
