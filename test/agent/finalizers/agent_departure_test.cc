// Agents that leave for good (issue 18, item 3): a node whose Node stays but where no agent pod of
// the DaemonSet has been bound for finalizer_release_after_seconds loses its finalizers on
// deleting objects. The rules: judged from the agent pods, never from a roster that has not
// listed or a watch that is failing, always confirmed by a fresh list; a crash-looping agent keeps
// its pod and so its finalizers; the departure requeues at the injected clock's time.
#include <catch2/catch.hpp>

#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/agent_pods.h"
#include "agent/finalizers/finalizer_keeper.h"
#include "agent/finalizers/node_roster.h"
#include "test/agent/reconcile/reconciler_fixture.h"
#include "test/fakes/captured_log.h"

using namespace nodehook;

namespace {

constexpr Duration kReleaseAfter = std::chrono::seconds(600);

ObjectPtr Pod(const std::string& uid, const std::string& node) {
  auto p = std::make_shared<KubeObject>();
  p->meta.uid = uid;
  p->meta.namespace_name = "nodehook";
  p->meta.name = "nodehook-" + uid;
  p->json = R"({"kind":"Pod","metadata":{"name":"nodehook-)" + uid + R"("},"spec":{"nodeName":")" + node + R"("}})";
  return p;
}

ObjectPtr NodeObject(const std::string& name) {
  auto n = std::make_shared<KubeObject>();
  n->meta.name = name;
  n->meta.uid = "uid-" + name;
  n->json = R"({"kind":"Node","metadata":{"name":")" + name + R"("}})";
  return n;
}

struct Released {
  std::string object, finalizer, reason;
};

struct ReleaseEvents final : EventRecorder {
  std::vector<Released> released;
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void FinalizerReleased(const ResourceRef&, const ObjectMeta& o, const std::string& f,
                         const std::string& why) override {
    released.push_back({o.uid, f, why});
  }
};

// Finalizer mode on node-a; every Node (a, b) exists and is in the Node watch; the agent pods'
// roster has listed pods on node-a and node-b.
struct DepartureFixture : Fixture {
  FakeKubeClient client;
  NodeRoster nodes;
  AgentPodRoster pods{clock, kReleaseAfter};
  bool watch_healthy = true;
  ReleaseEvents events;
  FinalizerKeeper keeper{client, "node-a", &nodes,
                         AgentWatch{&pods, ResourceRef{"", "v1", "pods", "nodehook", "app=nodehook"},
                                    [this] { return watch_healthy; }, &clock},
                         &events};
  WatchedResource resource = Resource({"create", "delete"});
  std::vector<std::string> due;

  DepartureFixture() {
    nodes.OnListed({NodeObject("node-a"), NodeObject("node-b")}, {});
    client.PutObject(*NodeObject("node-a"));
    client.PutObject(*NodeObject("node-b"));
    pods.SetOnDue([this](const std::string& f) { due.push_back(f); });
    pods.OnListed({Pod("pa", "node-a"), Pod("pb", "node-b")}, {});
    resource.finalizer = true;
    finalizers = &keeper;
  }
  void Deleting(const std::string& uid, const std::string& version) {
    cache.Upsert(WithFinalizers(Widget(uid, version, 1), R"(["nodehook.io/node-b","x"])", true));
  }
  // The fresh reads of agent pods, by field selector.
  std::vector<std::string> PodLists() const {
    std::vector<std::string> selectors;
    for (const auto& r : client.list_resources()) {
      if (r.plural == "pods") selectors.push_back(r.label_selector + " " + r.field_selector);
    }
    return selectors;
  }
};

const char* const kNodeBRemoved =
    R"([{"op":"test","path":"/metadata/finalizers","value":["nodehook.io/node-b","x"]},)"
    R"({"op":"replace","path":"/metadata/finalizers","value":["x"]}])";

}  // namespace

TEST_CASE("agent pods: a node's finalizer comes off once its last agent pod has been gone for the set time") {
  DepartureFixture f;
  CapturedLog log;
  f.Deleting("u1", "2");
  f.pods.OnDeleted(Pod("pb", "node-b"));  // node-b stays in the cluster; its agent left
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().empty());  // not yet: only just gone
  CHECK(f.PodLists().empty());

  f.clock.Advance(kReleaseAfter - std::chrono::seconds(1));
  f.pods.FireDue(f.clock.Now());
  CHECK(f.due.empty());
  f.clock.Advance(std::chrono::seconds(1));
  f.pods.FireDue(f.clock.Now());
  f.pods.FireDue(f.clock.Now());
  CHECK(f.due == std::vector<std::string>{"nodehook.io/node-b"});  // once: the requeue trigger

  f.client.QueueList(ObjectList{});  // the fresh read: no agent pod on node-b
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.PodLists() == std::vector<std::string>{"app=nodehook spec.nodeName=node-b"});
  REQUIRE(f.client.patches().size() == 1);
  CHECK(f.client.patches()[0].body == kNodeBRemoved);
  REQUIRE(f.events.released.size() == 1);
  CHECK(f.events.released[0].finalizer == "nodehook.io/node-b");
  CHECK(f.events.released[0].reason.find("no agent pod bound to its node for 600s") != std::string::npos);
  CHECK(log.Count("departed agent's finalizer removed") == 1);
  CHECK(f.runner.call_count() == 0);  // no delete hook here for node-b's share
}

TEST_CASE("agent pods: a crash-looping agent keeps its pod bound, so its node keeps its finalizers") {
  DepartureFixture f;
  f.Deleting("u1", "2");
  // Restarts change the pod's status, never its binding.
  f.pods.OnObject(Pod("pb", "node-b"));
  f.clock.Advance(10 * kReleaseAfter);
  f.pods.FireDue(f.clock.Now());
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.due.empty());
  CHECK(f.client.patches().empty());
  CHECK(f.PodLists().empty());
}

TEST_CASE("agent pods: a pod replaced on the same node (a rollout) is no departure") {
  DepartureFixture f;
  f.pods.OnDeleted(Pod("pb", "node-b"));
  f.clock.Advance(kReleaseAfter / 2);
  f.pods.OnObject(Pod("pb2", "node-b"));
  f.clock.Advance(kReleaseAfter);
  f.pods.FireDue(f.clock.Now());
  CHECK(f.due.empty());
  CHECK_FALSE(f.pods.AbsentSince("nodehook.io/node-b"));
}

TEST_CASE("agent pods: a fresh list that shows an agent on the node keeps the finalizer, whatever the watch said") {
  DepartureFixture f;
  f.Deleting("u1", "2");
  f.pods.OnDeleted(Pod("pb", "node-b"));
  f.clock.Advance(kReleaseAfter);
  ObjectList fresh;
  fresh.items.push_back(*Pod("pb3", "node-b"));  // back already; the watch has not shown it yet
  f.client.QueueList(fresh);
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.PodLists().size() == 1);
  CHECK(f.client.patches().empty());
  CHECK(f.events.released.empty());
}

TEST_CASE("agent pods: a failing pod watch or a failing fresh list is never taken as no agent") {
  DepartureFixture f;
  CapturedLog log;
  f.Deleting("u1", "2");
  f.pods.OnDeleted(Pod("pb", "node-b"));
  f.clock.Advance(kReleaseAfter);
  f.watch_healthy = false;
  CHECK(f.Reconcile(f.resource, "u1") == Duration(1000));  // look again soon
  CHECK(f.PodLists().empty());
  f.watch_healthy = true;
  f.client.QueueList(Status(StatusCode::kUnavailable, "connection refused"));
  CHECK(f.Reconcile(f.resource, "u1") == Duration(1000));
  CHECK(f.client.patches().empty());
  CHECK(log.Count("cannot tell whether a node left") == 2);
}

TEST_CASE("agent pods: before the pod roster's first list no node counts as without an agent") {
  FakeClock clock;
  AgentPodRoster pods(clock, kReleaseAfter);
  std::vector<std::string> due;
  pods.SetOnDue([&](const std::string& f) { due.push_back(f); });
  CHECK_FALSE(pods.AbsentSince("nodehook.io/node-b"));
  clock.Advance(10 * kReleaseAfter);
  pods.FireDue(clock.Now());
  CHECK(due.empty());
  // Listed: a node never seen with a pod has been without one since that list, as far as known.
  pods.OnListed({Pod("pa", "node-a")}, {});
  TimePoint listed = clock.Now();
  CHECK(pods.AbsentSince("nodehook.io/node-b") == listed);
  CHECK_FALSE(pods.AbsentSince("nodehook.io/node-a"));
  clock.Advance(kReleaseAfter);
  pods.FireDue(clock.Now());
  CHECK(due == std::vector<std::string>{"nodehook.io/node-b"});
}

TEST_CASE("agent pods: a pod missing from a relist starts its node's wait; a quarantined pod keeps its node") {
  FakeClock clock;
  AgentPodRoster pods(clock, kReleaseAfter);
  pods.OnListed({Pod("pa", "node-a"), Pod("pb", "node-b"), Pod("pc", "node-c")}, {});
  clock.Advance(std::chrono::seconds(5));
  BadObject bad;
  bad.meta.uid = "pc";
  pods.OnListed({Pod("pa", "node-a")}, {bad});
  CHECK(pods.AbsentSince("nodehook.io/node-b") == clock.Now());
  CHECK_FALSE(pods.AbsentSince("nodehook.io/node-c"));
  CHECK(pods.NamesFor("nodehook.io/node-b") == std::vector<std::string>{"node-b"});
}

TEST_CASE("agent pods: with no release time (0 = only when the Node is gone) nothing but a 404 releases") {
  Fixture f;
  FakeKubeClient client;
  NodeRoster nodes;
  nodes.OnListed({NodeObject("node-a"), NodeObject("node-b")}, {});
  FinalizerKeeper keeper(client, "node-a", &nodes);  // no AgentWatch: what ModeSet builds for 0
  f.finalizers = &keeper;
  auto r = Resource({"create", "delete"});
  r.finalizer = true;
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-b"])", true));
  f.clock.Advance(std::chrono::hours(24 * 365));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  CHECK(client.patches().empty());
}

TEST_CASE("agent pods are selected by the own pod's labels, without the ones a rollout changes") {
  auto selector = AgentPodSelector(
      R"({"metadata":{"name":"nodehook-x","labels":{"app.kubernetes.io/name":"nodehook",)"
      R"("controller-revision-hash":"5d8","pod-template-generation":"3","tier":"node"}}})");
  REQUIRE(selector.ok());
  CHECK(*selector == "app.kubernetes.io/name=nodehook,tier=node");
  auto none = AgentPodSelector(R"({"metadata":{"name":"x","labels":{"controller-revision-hash":"5d8"}}})");
  CHECK(none.status().code() == StatusCode::kInvalid);
  CHECK(none.status().message().find("metadata.labels") != std::string::npos);
  CHECK(PodNodeName(R"({"spec":{"nodeName":"node-b"}})") == "node-b");
  CHECK(PodNodeName(R"({"spec":{}})").empty());
}

TEST_CASE("agent pods are found from the own pod; a missing pod is a permanent answer, not a wait") {
  FakeKubeClient client;
  KubeObject own;
  own.meta.namespace_name = "nodehook";
  own.meta.name = "nodehook-abc";
  own.json = R"({"metadata":{"name":"nodehook-abc","labels":{"app":"nodehook"}}})";
  client.PutObject(own);
  FakeClock clock;
  CancelToken stop;
  auto found = WaitForAgentPods(client, "nodehook", "nodehook-abc", clock, stop);
  REQUIRE(found.ok());
  CHECK(found->CollectionPath() == "/api/v1/namespaces/nodehook/pods");
  CHECK(found->label_selector == "app=nodehook");
  auto missing = WaitForAgentPods(client, "nodehook", "nodehook-gone", clock, stop);
  CHECK(missing.status().code() == StatusCode::kNotFound);
}

TEST_CASE("agent pods are selected by their DaemonSet's selector when a DaemonSet controls the own pod") {
  FakeKubeClient client;
  KubeObject own;
  own.meta.namespace_name = "nodehook";
  own.meta.name = "nodehook-abc";
  own.json = R"({"metadata":{"name":"nodehook-abc","labels":{"app":"nodehook","team":"x"},"ownerReferences":[)"
             R"({"kind":"ReplicaSet","name":"other","controller":false},)"
             R"({"apiVersion":"apps/v1","kind":"DaemonSet","name":"nodehook","controller":true}]}})";
  client.PutObject(own);
  KubeObject ds;
  ds.meta.namespace_name = "nodehook";
  ds.meta.name = "nodehook";
  ds.json = R"({"kind":"DaemonSet","spec":{"selector":{"matchLabels":{"app":"nodehook"},"matchExpressions":[)"
            R"({"key":"tier","operator":"In","values":["a","b"]},{"key":"canary","operator":"DoesNotExist"}]}}})";
  client.PutObject(ds);
  CHECK(ControllingDaemonSet(own.json) == "nodehook");
  auto found = FindAgentPods(client, "nodehook", "nodehook-abc");
  REQUIRE(found.ok());
  CHECK(found->label_selector == "app=nodehook,tier in (a,b),!canary");
  CHECK(client.get_refs().back().resource.plural == "daemonsets");
  // An empty selector would take every pod in the namespace for an agent: refused.
  CHECK(DaemonSetSelector(R"({"spec":{"selector":{}}})").status().code() == StatusCode::kInvalid);
  CHECK(DaemonSetSelector(R"({"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Gt"}]}}})")
            .status().code() == StatusCode::kInvalid);
}

TEST_CASE("a pod labelled as an agent selects every agent pod of its namespace, whichever DaemonSet runs it") {
  FakeKubeClient client;
  KubeObject own;
  own.meta.namespace_name = "nodehook";
  own.meta.name = "pool-a-abc";
  own.json = R"({"metadata":{"name":"pool-a-abc","labels":{"app":"pool-a","nodehook.io/agent":"node-agent"},)"
             R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"pool-a","controller":true}]}})";
  client.PutObject(own);
  auto found = FindAgentPods(client, "nodehook", "pool-a-abc");
  REQUIRE(found.ok());
  // Not the DaemonSet's selector: the pods of pool-b's DaemonSet count too, the uninstall Job's not.
  CHECK(found->label_selector == "nodehook.io/agent");
  CHECK(client.get_refs().back().resource.plural == "pods");  // no DaemonSet read, nor its permission
  CHECK(LabelledAgentPod(own.json));
  CHECK_FALSE(LabelledAgentPod(R"({"metadata":{"labels":{"app":"nodehook"}}})"));
  CHECK_FALSE(LabelledAgentPod("not json"));
}

TEST_CASE("agent pods: when another agent released the finalizer first, this one neither logs nor posts it") {
  DepartureFixture f;
  CapturedLog log;
  f.Deleting("u1", "2");
  f.pods.OnDeleted(Pod("pb", "node-b"));
  f.clock.Advance(kReleaseAfter);
  f.client.QueueList(ObjectList{});
  // The other agent's patch came first: ours fails its test, and the re-read shows it done.
  f.client.QueuePatchResult(Status(StatusCode::kInvalid, "patch widgets: HTTP 422: the server rejected our request"));
  f.client.PutObject(*WithFinalizers(Widget("u1", "3", 1), R"(["x"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().size() == 1);
  CHECK(f.events.released.empty());
  CHECK(log.Count("departed agent's finalizer removed") == 0);
}
