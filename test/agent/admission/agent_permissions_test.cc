// The agents' permissions: the least-privilege rules follow the config, grant by grant, and their YAML.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/admission/agent_permissions.h"
#include "agent/admission/node_bound_policy.h"
#include "agent/admission/rbac_yaml.h"

using namespace nodehook;

namespace {

WatchedResource Watched(const std::string& group, const std::string& plural) {
  WatchedResource r;
  r.ref = ResourceRef{group, "v1", plural, "", ""};
  return r;
}

Config WithResources(std::vector<WatchedResource> resources) {
  Config c;
  c.resources = std::move(resources);
  return c;
}

// "group/resource: verb verb" per rule, for readable comparisons.
std::vector<std::string> Lines(const std::vector<PolicyRule>& rules) {
  std::vector<std::string> lines;
  for (const auto& r : rules) {
    std::string line = r.api_group + "/" + r.resource + ":";
    for (const auto& v : r.verbs) line += " " + v;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("a plain config gets list and watch on its resource and events create, nothing else") {
  auto rules = LeastPrivilegeRules(WithResources({Watched("example.com", "widgets")}));
  CHECK(Lines(rules) == std::vector<std::string>{"example.com/widgets: list watch", "events.k8s.io/events: create"});
}

TEST_CASE("finalizer mode adds get and patch on that resource only, and get, list, watch on nodes for departures") {
  WatchedResource gadgets = Watched("example.com", "gadgets");
  gadgets.finalizer = true;
  auto rules = LeastPrivilegeRules(WithResources({Watched("example.com", "widgets"), gadgets}));
  CHECK(Lines(rules) == std::vector<std::string>{"example.com/widgets: list watch",
                                                 "example.com/gadgets: get list watch patch", "/nodes: get list watch",
                                                 "events.k8s.io/events: create"});
}

TEST_CASE("node targeting adds list and watch on nodes") {
  WatchedResource widgets = Watched("example.com", "widgets");
  widgets.node_selector_path = "spec.nodeSelector";
  auto rules = LeastPrivilegeRules(WithResources({widgets}));
  CHECK(Lines(rules) == std::vector<std::string>{"example.com/widgets: list watch", "/nodes: list watch",
                                                 "events.k8s.io/events: create"});
}

TEST_CASE("a rollout policy adds list and watch on nodes: the hold label and the Node that owns the node Lease") {
  WatchedResource widgets = Watched("example.com", "widgets");
  widgets.rollout = RolloutPolicy{};
  auto rules = LeastPrivilegeRules(WithResources({widgets}));
  CHECK(Lines(rules) == std::vector<std::string>{"example.com/widgets: list watch", "/nodes: list watch",
                                                 "events.k8s.io/events: create"});
}

TEST_CASE("a resource watched twice (two selectors) gets one rule with the union of verbs") {
  WatchedResource in_a = Watched("", "configmaps"), in_b = Watched("", "configmaps");
  in_a.ref.namespace_name = "a";
  in_b.finalizer = true;
  auto rules = LeastPrivilegeRules(WithResources({in_a, in_b}));
  CHECK(Lines(rules) ==
        std::vector<std::string>{"/configmaps: get list watch patch", "/nodes: get list watch",
                                 "events.k8s.io/events: create"});
}

TEST_CASE("the ClusterRole YAML names every rule with quoted groups, resources and verbs") {
  std::string yaml = ClusterRoleYaml("nodehook", {{"", "nodes", {"list", "watch"}}});
  CHECK(yaml.find("kind: ClusterRole\n") != std::string::npos);
  CHECK(yaml.find("  name: nodehook\n") != std::string::npos);
  CHECK(yaml.find("  - apiGroups: [\"\"]\n    resources: [\"nodes\"]\n    verbs: [\"list\", \"watch\"]\n") !=
        std::string::npos);
}

TEST_CASE("finalizer mode adds a Role for the agent pods in the agent's namespace, the same as deploy/base's") {
  WatchedResource gadgets = Watched("example.com", "gadgets");
  gadgets.finalizer = true;
  Config with = WithResources({gadgets});
  CHECK(NeedsAgentPodsRole(with));
  with.tuning.finalizer_release_after_seconds = 0;  // released only when the Node is gone: no pods read
  CHECK_FALSE(NeedsAgentPodsRole(with));
  CHECK_FALSE(NeedsAgentPodsRole(WithResources({Watched("example.com", "widgets")})));
  std::string yaml = AgentPodsRoleYaml("nodehook");
  CHECK(yaml.find("kind: Role\n") != std::string::npos);
  CHECK(yaml.find("    resources: [\"pods\"]\n    verbs: [\"get\", \"list\", \"watch\"]\n") != std::string::npos);
  std::ifstream shipped(std::string(NODEHOOK_SOURCE_DIR) + "/deploy/base/agent-pods-role.yaml");
  std::stringstream text;
  text << shipped.rdbuf();
  CHECK(text.str() == yaml);
}

TEST_CASE("--previous keeps get, list and patch on what left finalizer or singleton mode, and the pods for a singleton") {
  WatchedResource widgets = Watched("example.com", "widgets");
  widgets.finalizer = true;
  WatchedResource gadgets = Watched("example.com", "gadgets");
  gadgets.singleton = true;
  WatchedResource plain_widgets = Watched("example.com", "widgets");
  Config before = WithResources({widgets, gadgets});
  // widgets stays, without finalizer mode; gadgets leaves the config.
  Config after = WithResources({plain_widgets});
  CHECK(Lines(RetirementRules(before, after)) ==
        std::vector<std::string>{"example.com/widgets: get list patch", "example.com/gadgets: get list patch"});
  CHECK(RetirementNeedsAgentPods(before, after));
  // Nothing left that mode: nothing to keep.
  CHECK(RetirementRules(before, before).empty());
  CHECK_FALSE(RetirementNeedsAgentPods(WithResources({widgets}), after));
}

TEST_CASE("with the steward, the agents lose the cross-node rights and the steward gets them") {
  WatchedResource w = Watched("example.com", "widgets");
  w.finalizer = true;
  Config c = WithResources({w});
  CHECK(Lines(LeastPrivilegeRules(c)) ==
        std::vector<std::string>{"example.com/widgets: get list watch patch", "/nodes: get list watch",
                                 "events.k8s.io/events: create"});
  CHECK(NeedsAgentPodsRole(c));
  c.tuning.cross_node_writes = "steward";
  CHECK(Lines(LeastPrivilegeRules(c)) ==
        std::vector<std::string>{"example.com/widgets: get list watch patch", "events.k8s.io/events: create"});
  CHECK_FALSE(NeedsAgentPodsRole(c));
  CHECK(Lines(StewardRules(c)) == std::vector<std::string>{"example.com/widgets: get list watch patch",
                                                           "/nodes: get list watch", "events.k8s.io/events: create"});
  std::string yaml = StewardRbacYaml(c, "nh", "ops");
  CHECK(yaml.find("kind: ClusterRole\nmetadata:\n  name: nh-steward\n") != std::string::npos);
  CHECK(yaml.find("kind: Role\nmetadata:\n  name: nh-steward-agent-pods\n") != std::string::npos);
  // Each bound to the steward's own account, never the agents'.
  CHECK(yaml.find("kind: ClusterRoleBinding\nmetadata:\n  name: nh-steward\n") != std::string::npos);
  CHECK(yaml.find("kind: RoleBinding\nmetadata:\n  name: nh-steward-agent-pods\n") != std::string::npos);
  CHECK(yaml.find("  - kind: ServiceAccount\n    name: nh-steward\n    namespace: ops\n") != std::string::npos);
  CHECK(yaml.find("name: nh\n") == std::string::npos);
  CHECK(yaml.find("nh-steward-leases") == std::string::npos);  // no rollout, no singleton
}

TEST_CASE("node outputs add a read of the Node and a patch of its status, and only with them") {
  WatchedResource w = Watched("example.com", "widgets");
  w.node_condition = "WidgetsReady";
  CHECK(Lines(LeastPrivilegeRules(WithResources({w}))) ==
        std::vector<std::string>{"example.com/widgets: list watch", "/nodes: get", "/nodes/status: patch",
                                 "events.k8s.io/events: create"});
  CHECK(Lines(LeastPrivilegeRules(WithResources({Watched("example.com", "widgets")}))) ==
        std::vector<std::string>{"example.com/widgets: list watch", "events.k8s.io/events: create"});
}

TEST_CASE("hook-published node outputs add a patch of the Node itself; a config that drops them keeps the rights to "
          "take them off") {
  WatchedResource w = Watched("example.com", "widgets");
  w.node_output_prefixes = {"widgets.example.com/"};
  CHECK(Lines(LeastPrivilegeRules(WithResources({w}))) ==
        std::vector<std::string>{"example.com/widgets: list watch", "/nodes: get patch", "/nodes/status: patch",
                                 "events.k8s.io/events: create"});
  CHECK(Lines(RetirementRules(WithResources({w}), WithResources({Watched("example.com", "widgets")}))) ==
        std::vector<std::string>{"/nodes: get patch", "/nodes/status: patch"});
}

TEST_CASE("a ready condition adds the writer's rights to the agents, or with the steward to the steward alone") {
  WatchedResource w = Watched("example.com", "widgets");
  w.ready_condition = "Ready";
  Config c = WithResources({w});
  CHECK(Lines(LeastPrivilegeRules(c)) ==
        std::vector<std::string>{"example.com/widgets: list watch", "example.com/widgets/status: patch",
                                 "apiextensions.k8s.io/customresourcedefinitions: get", "/nodes: list watch",
                                 "events.k8s.io/events: create"});
  // Any agent may be elected the writer: its writes cross nodes, so no node-bound rules are printed.
  CHECK(AgentsWriteAcrossNodes(c));
  c.tuning.cross_node_writes = "steward";
  CHECK(Lines(LeastPrivilegeRules(c)) == std::vector<std::string>{"example.com/widgets: list watch",
                                                                   "/nodes: list watch", "events.k8s.io/events: create"});
  CHECK_FALSE(AgentsWriteAcrossNodes(c));
  CHECK(Lines(StewardRules(c)) ==
        std::vector<std::string>{"example.com/widgets: list watch", "example.com/widgets/status: patch",
                                 "apiextensions.k8s.io/customresourcedefinitions: get", "events.k8s.io/events: create"});
  std::string yaml = StewardRbacYaml(c, "nh", "ops");
  CHECK(yaml.find("nh-steward-leases") != std::string::npos);  // the writer's election and the records
}

TEST_CASE("node steps add exactly what they use: the Node read, its patch for a cordon, pods list and eviction for a "
          "drain") {
  WatchedResource w = Watched("example.com", "widgets");
  w.rollout = RolloutPolicy{};
  Config c = WithResources({w});
  const std::vector<std::string> without = Lines(LeastPrivilegeRules(c));
  CHECK(std::find(without.begin(), without.end(), "/pods/eviction: create") == without.end());
  c.resources[0].rollout->reboot = RebootPolicy{{"/sbin/reboot"}, std::chrono::seconds(600)};
  CHECK(Lines(LeastPrivilegeRules(c)) == std::vector<std::string>{"example.com/widgets: list watch",
                                                                  "/nodes: get list watch",
                                                                  "events.k8s.io/events: create"});
  c.resources[0].rollout->cordon = true;
  CHECK(Lines(LeastPrivilegeRules(c)) == std::vector<std::string>{"example.com/widgets: list watch",
                                                                  "/nodes: get list watch patch",
                                                                  "events.k8s.io/events: create"});
  c.resources[0].rollout->drain = DrainPolicy{};
  CHECK(Lines(LeastPrivilegeRules(c)) ==
        std::vector<std::string>{"example.com/widgets: list watch", "/nodes: get list watch patch", "/pods: list",
                                 "/pods/eviction: create", "events.k8s.io/events: create"});
  // A steward coordinating the rollout counts the Nodes it keeps cordoned: it watches them.
  CHECK(Lines(StewardRules(c)) == std::vector<std::string>{"/nodes: list watch", "events.k8s.io/events: create"});
}

TEST_CASE("with the steward, the node-bound rules let an agent cordon its own Node under its mark, nothing more") {
  WatchedResource w = Watched("example.com", "widgets");
  w.rollout = RolloutPolicy{};
  w.rollout->drain = DrainPolicy{};
  w.rollout->reboot = RebootPolicy{{"/sbin/reboot"}, std::chrono::seconds(600)};
  Config c = WithResources({w});
  c.tuning.cross_node_writes = "steward";
  std::string yaml = NodeBoundPolicyYaml(c, PolicySubject{});
  CHECK(yaml.find("-node-bound-nodes") != std::string::npos);
  CHECK(yaml.find("'nodehook.io/cordoned-'") != std::string::npos);
  CHECK(yaml.find("['taints', 'unschedulable']") != std::string::npos);
  // A slot held through a reboot is within the rules: the reboot's timeout and a lease.
  CHECK(yaml.find("variables.duration <= 615") != std::string::npos);
}

TEST_CASE("the permissions for a config: the rules, and each Role only when something needs it") {
  WatchedResource widgets = Watched("example.com", "widgets");
  AgentPermissions plain = DeriveAgentPermissions(WithResources({widgets}), nullptr);
  CHECK(Lines(plain.rules) == Lines(LeastPrivilegeRules(WithResources({widgets}))));
  CHECK_FALSE(plain.lease_role);
  CHECK_FALSE(plain.rollout_role);
  CHECK_FALSE(plain.agent_pods_role);
  CHECK_FALSE(plain.own_pod_role);
  CHECK(plain.guarded.resources.size() == 1);

  WatchedResource singleton = Watched("example.com", "gadgets");
  singleton.singleton = true;
  WatchedResource ready = Watched("example.com", "doodads");
  ready.ready_condition = "Ready";
  AgentPermissions roles = DeriveAgentPermissions(WithResources({singleton, ready}), nullptr);
  CHECK(roles.lease_role);
  CHECK(roles.rollout_role);  // the ready condition's records and writer Lease

  // The agent pods Role grants get on pods already: no own pod Role beside it.
  WatchedResource outputs = Watched("example.com", "widgets");
  outputs.node_output_prefixes = {"widgets.example.com/"};
  CHECK(DeriveAgentPermissions(WithResources({outputs}), nullptr).own_pod_role);
  outputs.finalizer = true;
  AgentPermissions both = DeriveAgentPermissions(WithResources({outputs}), nullptr);
  CHECK(both.agent_pods_role);
  CHECK_FALSE(both.own_pod_role);
}

TEST_CASE("after a previous config: its release is granted too, and the node outputs it drops stay guarded") {
  WatchedResource before = Watched("example.com", "widgets");
  before.singleton = true;
  before.node_condition = "WidgetsReady";
  before.node_output_prefixes = {"widgets.example.com/", "kept.example.com/"};
  WatchedResource after = Watched("example.com", "widgets");
  after.node_output_prefixes = {"kept.example.com/"};
  const Config previous = WithResources({before});
  AgentPermissions p = DeriveAgentPermissions(WithResources({after}), &previous);
  CHECK(Lines(p.rules) == std::vector<std::string>{"example.com/widgets: get list watch patch", "/nodes: get patch",
                                                   "/nodes/status: patch", "events.k8s.io/events: create"});
  CHECK(p.agent_pods_role);  // a singleton left: its finalizer waits for the older agents
  CHECK_FALSE(p.own_pod_role);
  REQUIRE(p.guarded.resources.size() == 2);
  CHECK(p.guarded.resources[1].node_condition == "WidgetsReady");
  CHECK(p.guarded.resources[1].node_output_prefixes == std::vector<std::string>{"widgets.example.com/"});
  // Without a previous config nothing is added to what the rules guard.
  CHECK(DeriveAgentPermissions(WithResources({after}), nullptr).guarded.resources.size() == 1);
}
