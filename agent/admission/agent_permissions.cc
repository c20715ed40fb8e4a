#include "agent/admission/agent_permissions.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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

bool StewardNeedsLeaseRole(const Config& config) {
  return std::any_of(config.resources.begin(), config.resources.end(),
                     [](const WatchedResource& r) { return r.singleton || UsesLeases(r); });
}

bool StewardNeedsAgentPodsRole(const Config& config) {
  return std::any_of(config.resources.begin(), config.resources.end(), [&config](const WatchedResource& r) {
    return r.finalizer && !r.singleton && config.tuning.finalizer_release_after_seconds > 0;
  });
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

bool NeedsOwnPodRole(const Config& config) {
  return std::any_of(config.resources.begin(), config.resources.end(), PublishesNodeOutputs);
}

bool NeedsAgentPodsRole(const Config& config) {
  if (config.tuning.finalizer_release_after_seconds == 0) return false;
  if (config.tuning.cross_node_writes == "steward") return false;  // the steward watches them
  return std::any_of(config.resources.begin(), config.resources.end(),
                     [](const WatchedResource& r) { return r.finalizer; });
}

AgentPermissions DeriveAgentPermissions(const Config& config, const Config* previous) {
  AgentPermissions out;
  out.rules = LeastPrivilegeRules(config);
  bool retiring_singleton = false;
  out.guarded = config;
  if (previous != nullptr) {
    RuleSet merged;
    for (const PolicyRule& r : out.rules) merged.Grant(r.api_group, r.resource, r.verbs);
    for (const PolicyRule& r : RetirementRules(*previous, config)) merged.Grant(r.api_group, r.resource, r.verbs);
    out.rules = merged.Rules();
    retiring_singleton = RetirementNeedsAgentPods(*previous, config);
    // The outputs the previous config kept come off the own Node only: the rules guard them too.
    Config& guarded = out.guarded;
    for (const WatchedResource& r : previous->resources) {
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
  out.lease_role = std::any_of(config.resources.begin(), config.resources.end(),
                               [](const WatchedResource& r) { return r.singleton; });
  out.rollout_role = std::any_of(config.resources.begin(), config.resources.end(),
                                 [](const WatchedResource& r) { return UsesLeases(r); });
  out.agent_pods_role = NeedsAgentPodsRole(config) || retiring_singleton;
  out.own_pod_role = !out.agent_pods_role && NeedsOwnPodRole(config);
  return out;
}

}  // namespace nodehook
