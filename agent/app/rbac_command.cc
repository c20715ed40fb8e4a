#include "agent/app/rbac_command.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "agent/admission/node_bound_policy.h"
#include "agent/finalizers/finalizer_domains.h"

namespace nodehook {
namespace {

const std::vector<std::string> kVerbOrder = {"get", "list", "watch", "patch", "create"};

// Collects verbs per (group, resource) in first-seen order of resources.
class RuleSet {
 public:
  void Grant(const std::string& group, const std::string& resource, std::initializer_list<const char*> verbs) {
    Grant(group, resource, std::vector<std::string>(verbs.begin(), verbs.end()));
  }
  void Grant(const std::string& group, const std::string& resource, const std::vector<std::string>& verbs) {
    auto key = std::make_pair(group, resource);
    if (!verbs_.count(key)) order_.push_back(key);
    for (const std::string& v : verbs) verbs_[key].insert(v);
  }

  std::vector<PolicyRule> Rules() const {
    std::vector<PolicyRule> rules;
    for (const auto& key : order_) {
      PolicyRule rule{key.first, key.second, {}};
      for (const auto& verb : kVerbOrder) {
        if (verbs_.at(key).count(verb)) rule.verbs.push_back(verb);
      }
      rules.push_back(std::move(rule));
    }
    return rules;
  }

 private:
  std::vector<std::pair<std::string, std::string>> order_;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> verbs_;
};

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string FlowList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Quoted(items[i]);
  return out + "]";
}

// A binding of `role` (a ClusterRole, or a Role in the namespace it is applied to) to the
// steward's ServiceAccount.
std::string StewardBindingYaml(const std::string& kind, const std::string& role, const std::string& account,
                               const std::string& namespace_name) {
  std::ostringstream y;
  y << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: " << kind << "Binding\n"
    << "metadata:\n"
    << "  name: " << role << "\n"
    << "roleRef:\n"
    << "  apiGroup: rbac.authorization.k8s.io\n"
    << "  kind: " << kind << "\n"
    << "  name: " << role << "\n"
    << "subjects:\n"
    << "  - kind: ServiceAccount\n"
    << "    name: " << account << "\n"
    << "    namespace: " << namespace_name << "\n";
  return y.str();
}

// Node outputs: a condition or hook-published keys (these also write the Node itself).
bool PublishesNodeOutputs(const WatchedResource& r) { return !r.node_output_prefixes.empty(); }
bool KeepsNodeOutputs(const WatchedResource& r) { return !r.node_condition.empty() || PublishesNodeOutputs(r); }

void GrantReadyWriter(const WatchedResource& r, RuleSet& rules) {
  rules.Grant(r.ref.group, r.ref.plural + "/status", {"patch"});
  rules.Grant("apiextensions.k8s.io", "customresourcedefinitions", {"get"});
}

// The Leases in the agents' namespace: the rollouts' slots, node Leases and coordinator, the
// ready conditions' records and writer.
bool UsesLeases(const WatchedResource& r) { return r.rollout.has_value() || !r.ready_condition.empty(); }

}  // namespace

std::vector<PolicyRule> LeastPrivilegeRules(const Config& config) {
  RuleSet rules;
  bool targeting = false, finalizers = false;
  for (const WatchedResource& r : config.resources) {
    rules.Grant(r.ref.group, r.ref.plural, {"list", "watch"});
    if (r.finalizer) rules.Grant(r.ref.group, r.ref.plural, {"get", "patch"});
    // A singleton resource: its nodehook.io/singleton-handled annotation and the one finalizer
    // nodehook.io/singleton (re-read with a GET after a concurrent change of the list).
    if (r.singleton) rules.Grant(r.ref.group, r.ref.plural, {"get", "patch"});
    // A rollout reads this Node too: its hold label, and its uid (the owner of its node Lease);
    // so does a ready condition (its record's labels and owner).
    targeting = targeting || !r.node_selector_path.empty() || r.rollout.has_value() || !r.ready_condition.empty();
    finalizers = finalizers || r.finalizer;
    // The ready condition's writer, when the agents elect it: the CRD checked at start, the
    // condition patched onto the status.
    if (!r.ready_condition.empty() && config.tuning.cross_node_writes != "steward") GrantReadyWriter(r, rules);
    // A rollout's node steps (nodework/node_steps.h): this Node read (its cordon, its boot ID); the
    // cordon and its mark patched on it; the drain lists the pods bound to it and evicts them.
    if (r.rollout && r.rollout->HasNodeSteps()) rules.Grant("", "nodes", {"get"});
    if (r.rollout && r.rollout->Cordons()) rules.Grant("", "nodes", {"patch"});
    if (r.rollout && r.rollout->drain) {
      rules.Grant("", "pods", {"list"});
      rules.Grant("", "pods/eviction", {"create"});
    }
  }
  if (targeting) rules.Grant("", "nodes", {"list", "watch"});
  // Node outputs: this Node read at start (and before each taint write), its status written by
  // server-side apply; with prefixes, the Node itself too (the node-bound rules keep each agent to
  // its own Node, and there to its config's keys).
  const bool outputs = std::any_of(config.resources.begin(), config.resources.end(), KeepsNodeOutputs);
  if (outputs) {
    rules.Grant("", "nodes", {"get"});
    rules.Grant("", "nodes/status", {"patch"});
  }
  if (std::any_of(config.resources.begin(), config.resources.end(), PublishesNodeOutputs)) {
    rules.Grant("", "nodes", {"patch"});
  }
  // With the steward, departures are its to judge: the agents need no Node but their own.
  if (finalizers && config.tuning.cross_node_writes != "steward") rules.Grant("", "nodes", {"get", "list", "watch"});
  rules.Grant("events.k8s.io", "events", {"create"});
  return rules.Rules();
}

std::vector<PolicyRule> StewardRules(const Config& config) {
  RuleSet rules;
  bool finalizers = false, cordoned = false;
  for (const WatchedResource& r : config.resources) {
    if (!r.ready_condition.empty()) {
      rules.Grant(r.ref.group, r.ref.plural, {"list", "watch"});
      GrantReadyWriter(r, rules);
    }
    // A rollout it coordinates that cordons counts the Nodes it keeps cordoned (a watch of the
    // cordoned Nodes, rollout/coordinator/cordoned_nodes.h).
    cordoned = cordoned || (r.rollout && r.rollout->Cordons());
    if (!r.finalizer || r.singleton) continue;
    rules.Grant(r.ref.group, r.ref.plural, {"get", "list", "watch", "patch"});
    finalizers = true;
  }
  if (finalizers) rules.Grant("", "nodes", {"get", "list", "watch"});
  if (cordoned) rules.Grant("", "nodes", {"list", "watch"});
  rules.Grant("events.k8s.io", "events", {"create"});
  return rules.Rules();
}

std::string StewardRbacYaml(const Config& config, const std::string& name, const std::string& namespace_name) {
  const std::string account = name + "-steward";
  std::ostringstream y;
  y << ClusterRoleYaml(account, StewardRules(config)) << "---\n"
    << StewardBindingYaml("ClusterRole", account, account, namespace_name);
  bool leases = false, pods = false;
  for (const WatchedResource& r : config.resources) {
    leases = leases || r.singleton || UsesLeases(r);
    pods = pods || (r.finalizer && !r.singleton && config.tuning.finalizer_release_after_seconds > 0);
  }
  if (leases) {
    y << "---\n"
      << "# The rollout coordinators' Leases and grants, the ready conditions' writer Lease and the nodes'\n"
      << "# records it reads, and the singleton Lease it frees once expired, in the Lease namespace only.\n"
      << "apiVersion: rbac.authorization.k8s.io/v1\n"
      << "kind: Role\n"
      << "metadata:\n"
      << "  name: " << account << "-leases\n"
      << "rules:\n"
      << "  - apiGroups: [\"coordination.k8s.io\"]\n"
      << "    resources: [\"leases\"]\n"
      << "    verbs: [\"get\", \"list\", \"watch\", \"create\", \"update\"]\n"
      << "---\n"
      << StewardBindingYaml("Role", account + "-leases", account, namespace_name);
  }
  if (pods) {
    y << "---\n"
      << "# Which nodes still run an agent: the agent pods (labelled nodehook.io/agent), in their namespace only.\n"
      << "apiVersion: rbac.authorization.k8s.io/v1\n"
      << "kind: Role\n"
      << "metadata:\n"
      << "  name: " << account << "-agent-pods\n"
      << "rules:\n"
      << "  - apiGroups: [\"\"]\n"
      << "    resources: [\"pods\"]\n"
      << "    verbs: [\"get\", \"list\", \"watch\"]\n"
      << "---\n"
      << StewardBindingYaml("Role", account + "-agent-pods", account, namespace_name);
  }
  return y.str();
}

std::vector<PolicyRule> RetirementRules(const Config& previous, const Config& config) {
  RuleSet rules;
  for (const FinalizerDomain& d : RetiredDomains(DomainsServed(previous), DomainsServed(config))) {
    rules.Grant(d.resource.group, d.resource.plural, {"get", "list", "patch"});
  }
  // The outputs the previous config kept come off by an empty apply of its manager (and its
  // taints by a guarded write of the Node).
  if (std::any_of(previous.resources.begin(), previous.resources.end(), KeepsNodeOutputs)) {
    rules.Grant("", "nodes", {"get"});
    rules.Grant("", "nodes/status", {"patch"});
  }
  if (std::any_of(previous.resources.begin(), previous.resources.end(), PublishesNodeOutputs)) {
    rules.Grant("", "nodes", {"patch"});
  }
  return rules.Rules();
}

bool RetirementNeedsAgentPods(const Config& previous, const Config& config) {
  auto retired = RetiredDomains(DomainsServed(previous), DomainsServed(config));
  return std::any_of(retired.begin(), retired.end(),
                     [](const FinalizerDomain& d) { return d.kind == FinalizerKind::kSingleton; });
}

std::string ClusterRoleYaml(const std::string& name, const std::vector<PolicyRule>& rules) {
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: least privilege for the config it was given.\n"
    << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: ClusterRole\n"
    << "metadata:\n"
    << "  name: " << name << "\n"
    << "rules:\n";
  for (const PolicyRule& rule : rules) {
    y << "  - apiGroups: " << FlowList({rule.api_group}) << "\n"
      << "    resources: " << FlowList({rule.resource}) << "\n"
      << "    verbs: " << FlowList(rule.verbs) << "\n";
  }
  return y.str();
}

std::string LeaseRoleYaml(const std::string& name, const std::string& lease_name) {
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: the singleton Lease, in the agent's namespace only.\n"
    << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: Role\n"
    << "metadata:\n"
    << "  name: " << name << "-lease\n"
    << "rules:\n"
    << "  # create cannot be limited by name: the name is not known before the object exists.\n"
    << "  - apiGroups: [\"coordination.k8s.io\"]\n"
    << "    resources: [\"leases\"]\n"
    << "    verbs: [\"create\"]\n"
    << "  - apiGroups: [\"coordination.k8s.io\"]\n"
    << "    resources: [\"leases\"]\n"
    << "    resourceNames: " << FlowList({lease_name}) << "\n"
    << "    verbs: [\"get\", \"update\"]\n";
  return y.str();
}

std::string RolloutRoleYaml(const std::string& name) {
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: fleet rollouts' slot, node and coordinator Leases, and the ready\n"
    << "# conditions' records and writer Lease, in the agent's namespace only.\n"
    << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: Role\n"
    << "metadata:\n"
    << "  name: " << name << "-rollout\n"
    << "rules:\n"
    << "  # Their names depend on the resource, the slot count and the node: not listable here. delete:\n"
    << "  # a node's own Lease under an earlier version's (hashed) name, once moved to the node's name.\n"
    << "  - apiGroups: [\"coordination.k8s.io\"]\n"
    << "    resources: [\"leases\"]\n"
    << "    verbs: [\"get\", \"list\", \"watch\", \"create\", \"update\", \"delete\"]\n";
  return y.str();
}

std::string AgentPodsRoleYaml(const std::string& name) {
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: finalizer mode's agent pods, in the agent's namespace only.\n"
    << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: Role\n"
    << "metadata:\n"
    << "  name: " << name << "-agent-pods\n"
    << "rules:\n"
    << "  # Its own pod (get), and its DaemonSet's pods: a node without one loses its finalizers.\n"
    << "  - apiGroups: [\"\"]\n"
    << "    resources: [\"pods\"]\n"
    << "    verbs: [\"get\", \"list\", \"watch\"]\n"
    << "  # Its DaemonSet, for the selector of those pods.\n"
    << "  - apiGroups: [\"apps\"]\n"
    << "    resources: [\"daemonsets\"]\n"
    << "    verbs: [\"get\"]\n";
  return y.str();
}

std::string OwnPodRoleYaml(const std::string& name) {
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: hooks publish node outputs; each agent reads its own pod's tolerations\n"
    << "# (a NoExecute taint it does not tolerate is refused), in the agent's namespace only.\n"
    << "apiVersion: rbac.authorization.k8s.io/v1\n"
    << "kind: Role\n"
    << "metadata:\n"
    << "  name: " << name << "-own-pod\n"
    << "rules:\n"
    << "  # A pod's name is not known before it exists: not limited by name.\n"
    << "  - apiGroups: [\"\"]\n"
    << "    resources: [\"pods\"]\n"
    << "    verbs: [\"get\"]\n";
  return y.str();
}

bool NeedsOwnPodRole(const Config& config) {
  return std::any_of(config.resources.begin(), config.resources.end(), PublishesNodeOutputs);
}

bool NeedsAgentPodsRole(const Config& config) {
  if (config.tuning.finalizer_release_after_seconds == 0) return false;
  if (config.tuning.cross_node_writes == "steward") return false;  // the steward watches them
  return std::any_of(config.resources.begin(), config.resources.end(),
                     [](const WatchedResource& r) { return r.finalizer; });
}

CLI::App* AddRbacCommand(CLI::App& app, RbacCommandArgs* args) {
  CLI::App* rbac = app.add_subcommand("rbac", "Print the least-privilege ClusterRole for a config (YAML)");
  rbac->add_option("--config,-c", args->config_path, "Config file (JSON)")->required();
  rbac->add_option("--previous", args->previous_path,
                   "the config the agents ran before this one: keep the rights to release the finalizers it leaves "
                   "behind (resources that left finalizer or singleton mode, or the config)");
  rbac->add_option("--name", args->name, "metadata.name of the ClusterRole")->capture_default_str();
  rbac->add_option("--namespace", args->namespace_name,
                   "the agents' namespace: the admission rules confine the writes of their ServiceAccount there")
      ->capture_default_str();
  rbac->add_option("--service-account", args->service_account, "the agents' ServiceAccount")->capture_default_str();
  rbac->add_option("--part", args->part, "what to print: rbac (the agents' roles), admission (the node-bound rules), steward (its roles) or all")
      ->check(CLI::IsMember({"all", "rbac", "admission", "steward"}))
      ->capture_default_str();
  return rbac;
}

int RunRbacCommand(const RbacCommandArgs& args, std::ostream& out, std::ostream& err) {
  ConfigSources sources = EnvironmentSources();
  // The role is the same for every node; a shipped config takes its node name from the pod.
  if (sources.env.count("NODE_NAME") == 0) sources.env["NODE_NAME"] = "any-node";
  // The role does not depend on where the hooks are: it is often rendered off the node.
  sources.check_program = nullptr;
  ConfigResult loaded = LoadConfigFile(args.config_path, sources);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) err << e.ToString(args.config_path) << "\n";
    return 2;
  }
  std::vector<PolicyRule> rules = LeastPrivilegeRules(loaded.config);
  bool retiring_singleton = false;
  Config guarded = loaded.config;  // what the node-bound rules guard: this config, and what retires
  if (!args.previous_path.empty()) {
    ConfigResult previous = LoadConfigFile(args.previous_path, sources);
    if (!previous.ok()) {
      for (const auto& e : previous.errors) err << e.ToString(args.previous_path) << "\n";
      return 2;
    }
    RuleSet merged;
    for (const PolicyRule& r : rules) merged.Grant(r.api_group, r.resource, r.verbs);
    for (const PolicyRule& r : RetirementRules(previous.config, loaded.config)) {
      merged.Grant(r.api_group, r.resource, r.verbs);
    }
    rules = merged.Rules();
    retiring_singleton = RetirementNeedsAgentPods(previous.config, loaded.config);
    // The outputs the previous config kept come off the own Node only: the rules guard them too.
    for (const WatchedResource& r : previous.config.resources) {
      WatchedResource retiring;
      retiring.ref = r.ref;
      const bool kept = std::any_of(guarded.resources.begin(), guarded.resources.end(),
                                    [&r](const WatchedResource& g) { return g.node_condition == r.node_condition; });
      if (!r.node_condition.empty() && !kept) retiring.node_condition = r.node_condition;
      for (const std::string& prefix : r.node_output_prefixes) {
        const bool held = std::any_of(guarded.resources.begin(), guarded.resources.end(), [&prefix](const WatchedResource& g) {
          return std::find(g.node_output_prefixes.begin(), g.node_output_prefixes.end(), prefix) != g.node_output_prefixes.end();
        });
        if (!held) retiring.node_output_prefixes.push_back(prefix);
      }
      if (KeepsNodeOutputs(retiring)) guarded.resources.push_back(retiring);
    }
  }
  if (args.part == "admission") {
    PrintAdmission(guarded, args, out);
    return 0;
  }
  if (args.part == "steward") {
    out << StewardRbacYaml(loaded.config, args.name, args.namespace_name);
    return 0;
  }
  out << ClusterRoleYaml(args.name, rules);
  bool singleton = false;
  for (const WatchedResource& r : loaded.config.resources) singleton = singleton || r.singleton;
  if (singleton) out << "---\n" << LeaseRoleYaml(args.name, loaded.config.tuning.lease_name);
  bool rollout = false;
  for (const WatchedResource& r : loaded.config.resources) rollout = rollout || UsesLeases(r);
  if (rollout) out << "---\n" << RolloutRoleYaml(args.name);
  if (NeedsAgentPodsRole(loaded.config) || retiring_singleton) {
    out << "---\n" << AgentPodsRoleYaml(args.name);
  } else if (NeedsOwnPodRole(loaded.config)) {
    out << "---\n" << OwnPodRoleYaml(args.name);  // the agent pods Role has get on pods already
  }
  if (args.part == "all") {
    out << "---\n";
    PrintAdmission(guarded, args, out);
    if (loaded.config.tuning.cross_node_writes == "steward") out << "---\n" << StewardRbacYaml(loaded.config, args.name, args.namespace_name);
  }
  return 0;
}

void PrintAdmission(const Config& config, const RbacCommandArgs& args, std::ostream& out) {
  if (AgentsWriteAcrossNodes(config)) {
    // The rules would refuse the agents' cross-node writes: print none rather than break them.
    out << "# No node-bound admission rules: with tuning.cross_node_writes \"agents\" the agents remove departed\n"
        << "# nodes' finalizers, grant rollout slots or take over the singleton Lease themselves, which the rules\n"
        << "# refuse. Set it to \"steward\" and run the steward to confine each agent to its node (docs/security.md).\n";
  } else {
    PolicySubject subject{args.name, args.namespace_name, args.service_account};
    out << NodeBoundPolicyYaml(config, subject);
  }
}

}  // namespace nodehook
