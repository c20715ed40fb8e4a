// The node-bound admission rules follow the config: which policies, which resources, whose account.
#include <catch2/catch.hpp>

#include <string>

#include "agent/admission/node_bound_policy.h"
#include "agent/rollout/rules/rollout_leases.h"

using namespace nodehook;

namespace {

WatchedResource Watched(const std::string& plural) {
  WatchedResource r;
  r.ref = ResourceRef{"example.com", "v1", plural, "", ""};
  return r;
}

Config Steward(std::vector<WatchedResource> resources) {
  Config c;
  c.resources = std::move(resources);
  c.tuning.cross_node_writes = "steward";
  return c;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("every config gets the events rule, matched to the agents' account, refusing tokens without a node") {
  PolicySubject subject{"nh", "agents-ns", "agent-sa"};
  std::string yaml = NodeBoundPolicyYaml(Steward({Watched("widgets")}), subject);
  CHECK(Has(yaml, "name: nh-node-bound-events\n"));
  CHECK(Has(yaml, "request.userInfo.username == 'system:serviceaccount:agents-ns:agent-sa'"));
  CHECK(Has(yaml, "authentication.kubernetes.io/node-name"));
  CHECK(Has(yaml, "failurePolicy: Fail\n"));
  CHECK(Has(yaml, "validationActions: [Deny]\n"));
  CHECK(Has(yaml, kOtherNodeRefusal));
  CHECK(Has(yaml, "names none"));
  // Hooks only: the agents write no object and no Lease.
  CHECK_FALSE(Has(yaml, "node-bound-objects"));
  CHECK_FALSE(Has(yaml, "node-bound-leases"));
}

TEST_CASE("finalizer resources are guarded in every version, with their subresources") {
  WatchedResource w = Watched("widgets");
  w.finalizer = true;
  std::string yaml = NodeBoundPolicyYaml(Steward({w, Watched("gadgets")}), PolicySubject{});
  CHECK(Has(yaml, "name: nodehook-node-bound-objects\n"));
  CHECK(Has(yaml, R"({apiGroups: ["example.com"], apiVersions: ["*"], resources: ["widgets", "widgets/*"], )"));
  CHECK_FALSE(Has(yaml, "\"gadgets\""));  // it is never written
  CHECK(Has(yaml, "matchPolicy: Equivalent\n"));
  // The status is held like the rest (a CRD without a status subresource stores it from the main
  // resource).
  CHECK(Has(yaml, "object.all(k, k == 'metadata' || (k in oldObject && object[k] == oldObject[k]))"));
  CHECK_FALSE(Has(yaml, "k == 'status'"));
}

TEST_CASE("a singleton resource is bound to the singleton Lease as its parameter") {
  WatchedResource s = Watched("gadgets");
  s.singleton = true;
  Config c = Steward({s});
  c.tuning.lease_name = "the-lease";
  std::string yaml = NodeBoundPolicyYaml(c, PolicySubject{"nodehook", "ns1", "nodehook"});
  CHECK(Has(yaml, "name: nodehook-node-bound-singleton\n"));
  CHECK(Has(yaml, "paramRef:\n    name: the-lease\n    namespace: ns1\n"));
  CHECK(Has(yaml, "parameterNotFoundAction: Allow\n"));  // Deny would refuse everyone's writes
  CHECK(Has(yaml, "name: nodehook-node-bound-leases\n"));
  CHECK(Has(yaml, "matchLabels: {kubernetes.io/metadata.name: ns1}"));
  c.tuning.lease_namespace = "leases-ns";
  CHECK(Has(NodeBoundPolicyYaml(c, PolicySubject{}), "namespace: leases-ns\n"));
}

TEST_CASE("a slot is held at most for the longest slot lease or soak of the config") {
  WatchedResource a = Watched("widgets"), b = Watched("gadgets");
  a.rollout = RolloutPolicy{};
  a.rollout->slot_lease = std::chrono::seconds(30);
  b.rollout = RolloutPolicy{};
  b.rollout->soak = std::chrono::seconds(600);
  CHECK(MaxSlotLeaseSeconds(Steward({a})) == 30);
  CHECK(MaxSlotLeaseSeconds(Steward({a, b})) == 600);
  CHECK(MaxSlotLeaseSeconds(Steward({Watched("x")})) == 0);
  CHECK(Has(NodeBoundPolicyYaml(Steward({a, b}), PolicySubject{}), "variables.duration <= 600"));
}

TEST_CASE("a Lease's kind comes from its name: the own node Leases are named after the token's node") {
  WatchedResource w = Watched("widgets"), g = Watched("gadgets"), s = Watched("solos");
  w.rollout = RolloutPolicy{};
  g.ready_condition = "Ready";
  s.singleton = true;
  Config c = Steward({w, g, s});
  c.tuning.lease_name = "the-lease";
  c.tuning.lease_duration_seconds = 20;
  const std::string yaml = NodeBoundPolicyYaml(c, PolicySubject{});
  const std::string rw = RolloutIdOf(w.ref), rg = RolloutIdOf(g.ref);
  const std::string own = "['nodehook-rollout-" + rw + "-node-', 'nodehook-ready-" + rg + "-node-']";
  CHECK(Has(yaml, own + ".map(p, p + variables.node)"));
  CHECK(Has(yaml, "variables.name.matches('^nodehook-rollout-(" + rw + ")-slot-[0-9]+$') ? 'slot'"));
  CHECK(Has(yaml, "variables.name == 'the-lease' ? 'singleton'"));
  CHECK_FALSE(Has(yaml, "rollout-kind"));  // no label the writer chose decides anything
  CHECK(Has(yaml, "the singleton Lease for at most 20 seconds"));
  // Another node's name, or an earlier version's hashed one: never created, kept only by its holder.
  CHECK(Has(yaml, "variables.kind != 'node' || (request.operation != 'CREATE' && "));
  // Without a singleton resource the singleton Lease is no Lease of theirs.
  CHECK(Has(NodeBoundPolicyYaml(Steward({w}), PolicySubject{}), "expression: \"false ? 'singleton'"));
}

TEST_CASE("agents that write across nodes themselves get no rules: the rules would refuse that work") {
  WatchedResource w = Watched("widgets");
  Config c = Steward({w});
  c.tuning.cross_node_writes = "agents";
  CHECK_FALSE(AgentsWriteAcrossNodes(c));  // hooks only: nothing crosses nodes
  for (auto mode : {&WatchedResource::finalizer, &WatchedResource::singleton}) {
    WatchedResource m = w;
    m.*mode = true;
    c.resources = {m};
    CHECK(AgentsWriteAcrossNodes(c));
    c.tuning.cross_node_writes = "steward";
    CHECK_FALSE(AgentsWriteAcrossNodes(c));
    c.tuning.cross_node_writes = "agents";
  }
  w.rollout = RolloutPolicy{};
  c.resources = {w};
  CHECK(AgentsWriteAcrossNodes(c));
}

TEST_CASE("node outputs are guarded: the own Node's status only, and only the conditions the config keeps") {
  WatchedResource w = Watched("widgets");
  w.node_condition = "WidgetsReady";
  Config c;  // node outputs cross no node: the rules come with "agents" too
  c.resources = {w, Watched("gadgets")};
  std::string yaml = NodeBoundPolicyYaml(c, PolicySubject{});
  CHECK(Has(yaml, "name: nodehook-node-bound-nodes\n"));
  CHECK(Has(yaml, R"(resources: ["nodes", "nodes/status"])"));
  CHECK(Has(yaml, "request.name == variables.node"));
  CHECK(Has(yaml, "!(c.type in ['WidgetsReady'])"));
  CHECK_FALSE(Has(NodeBoundPolicyYaml(Steward({Watched("gadgets")}), PolicySubject{}), "node-bound-nodes"));
  // Without prefixes the Node itself is not theirs to update.
  CHECK(Has(yaml, "request.operation == 'UPDATE' && (variables.subresource == 'status')"));
  CHECK_FALSE(Has(yaml, "taints_before"));
  // Through /status: no metadata (the API server would store labels sent there), and no status
  // field but the conditions (nodeInfo.bootID, addresses, allocatable are the kubelet's).
  CHECK(Has(yaml, "variables.subresource != 'status' || (object.metadata.all(k, k in ['managedFields', "
                  "'resourceVersion', 'generation']"));
  CHECK(Has(yaml, "may not change its Node\\\\'s metadata through nodes/status"));
  CHECK(Has(yaml, "variables.status_after.all(k, k == 'conditions' || (k in variables.status_before"));
  CHECK(Has(yaml, "not the kubelet\\\\'s other status fields"));
}

TEST_CASE("with prefixes the own Node may change, but only in the labels, annotations and taints under them") {
  WatchedResource w = Watched("widgets");
  w.node_output_prefixes = {"widgets.example.com/"};
  Config c;
  c.resources = {w};
  std::string yaml = NodeBoundPolicyYaml(c, PolicySubject{});
  CHECK(Has(yaml, "(variables.subresource == 'status' || variables.subresource == '')"));
  CHECK(Has(yaml, "['widgets.example.com/'].exists(p, t.key.startsWith(p))"));
  CHECK(Has(yaml, "not other labels"));
  CHECK(Has(yaml, "not other taints"));
  CHECK(Has(yaml, "not the rest of its spec"));
  CHECK(Has(yaml, "not the rest of its metadata"));
}
