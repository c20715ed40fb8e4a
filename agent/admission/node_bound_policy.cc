#include "agent/admission/node_bound_policy.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <vector>

#include "agent/admission/admission_policy.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {
namespace {

// Everything but metadata.finalizers (and, for singleton resources, the singleton-handled
// annotation) stays as it was: every top-level field but metadata, labels, annotations and owners.
// The status too: a write to the main resource of a CRD without a status subresource stores it
// (with one, the API server keeps the old status and this holds trivially).
std::vector<Validation> OnlyFinalizersChange(const std::string& free_annotation) {
  std::string annotations =
      "variables.annotations_after.all(k, k == '" + free_annotation +
      "' || (k in variables.annotations_before && variables.annotations_after[k] == variables.annotations_before[k])) "
      "&& variables.annotations_before.all(k, k == '" + free_annotation + "' || k in variables.annotations_after)";
  return {
      {"request.operation == 'UPDATE' && variables.subresource == ''", "",
       "'nodehook agents may only change the finalizers of an object, not ' + request.operation + ' ' + "
       "request.resource.resource + (variables.subresource != '' ? '/' + variables.subresource : '')"},
      {"object.all(k, k == 'metadata' || (k in oldObject && object[k] == oldObject[k])) && "
       "oldObject.all(k, k == 'metadata' || k in object)",
       "nodehook agents may change only metadata.finalizers of this object, not its content", ""},
      {"(has(object.metadata.labels) ? object.metadata.labels : {}) == "
       "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}) && "
       "(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) == "
       "(has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []) && " +
           annotations,
       "nodehook agents may change only metadata.finalizers of this object, not its labels, annotations or owners", ""},
  };
}

std::vector<std::pair<std::string, std::string>> FinalizerVariables() {
  return {
      {"subresource", "has(request.subResource) ? request.subResource : ''"},
      {"before", "oldObject != null && has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []"},
      {"after", "object != null && has(object.metadata.finalizers) ? object.metadata.finalizers : []"},
      {"changed",
       "variables.after.filter(f, !(f in variables.before)) + variables.before.filter(f, !(f in variables.after))"},
      {"annotations_before",
       "oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
      {"annotations_after", "object != null && has(object.metadata.annotations) ? object.metadata.annotations : {}"},
  };
}

Policy ObjectsPolicy(const std::vector<const WatchedResource*>& resources, const PolicySubject& subject) {
  Policy p;
  p.name = subject.name + "-node-bound-objects";
  p.comment = "Finalizer mode: an agent adds or removes only its own node's finalizer and changes nothing else.";
  for (const auto* r : resources) p.resource_rules.push_back(ResourceRule(r->ref.group, r->ref.plural, "\"*\""));
  p.variables = FinalizerVariables();
  // A node name that is not a finalizer name part is hashed (finalizers.h), which CEL cannot do.
  p.variables.emplace_back("own", "'" + std::string("nodehook.io/") + "' + variables.node");
  p.validations = OnlyFinalizersChange("");
  p.validations.push_back(
      {"variables.changed.all(f, f == variables.own) && (variables.changed.size() == 0 || "
       "(size(variables.node) <= 63 && variables.node != 'singleton'))",
       "",
       "'node ' + variables.node + ' may add or remove only its own finalizer ' + variables.own + "
       "(size(variables.node) > 63 ? ' (a node name longer than 63 characters gets a hashed finalizer these rules "
       "cannot check)' : ', not ' + variables.changed.filter(f, f != variables.own).join(', '))"});
  return p;
}

Policy SingletonPolicy(const std::vector<const WatchedResource*>& resources, const Config& config,
                       const PolicySubject& subject) {
  Policy p;
  p.name = subject.name + "-node-bound-singleton";
  p.comment =
      "Cluster-singleton resources: only the node that holds the singleton Lease (the parameter) changes "
      "nodehook.io/singleton or nodehook.io/singleton-handled, and nothing else.";
  for (const auto* r : resources) p.resource_rules.push_back(ResourceRule(r->ref.group, r->ref.plural, "\"*\""));
  p.param_kind = "coordination.k8s.io/v1 Lease";
  p.param_namespace = LeaseNamespaceFor(config, subject);
  p.param_name = config.tuning.lease_name;
  p.variables = FinalizerVariables();
  p.variables.emplace_back("holder", "has(params.spec.holderIdentity) ? params.spec.holderIdentity : ''");
  p.validations = OnlyFinalizersChange(kSingletonHandledAnnotation);
  p.validations.push_back({"variables.changed.all(f, f == '" + std::string(kSingletonFinalizer) + "')", "",
                           "'nodehook agents may add or remove only " + std::string(kSingletonFinalizer) +
                               " on this resource, not ' + variables.changed.join(', ')"});
  p.validations.push_back({"variables.holder != '' && " + CelNamesNode("variables.holder"), "",
                           "'node ' + variables.node + ' does not hold the singleton Lease " + p.param_name +
                               " (' + (variables.holder == '' ? 'nobody does' : variables.holder + ' does') + "
                               "'): only the leader acts for the cluster'"});
  return p;
}

// The Lease names an agent may write, from the config: its own node Leases, named after the node
// (rollout/rules/rollout_leases.h), and the slots of its rollouts.
struct LeaseNames {
  std::string own_prefixes;   // CEL list: 'nodehook-rollout-<rid>-node-', 'nodehook-ready-<rid>-node-'
  std::string slot_pattern;   // RE2: ^nodehook-rollout-(<rid>|...)-slot-[0-9]+$
  std::string example;        // the first own name, for people
};

LeaseNames LeaseNamesOf(const Config& config) {
  LeaseNames names;
  std::string rids;
  for (const auto& r : config.resources) {
    const std::string rid = RolloutIdOf(r.ref);
    std::vector<std::string> families;
    if (r.rollout) families.emplace_back("rollout");
    if (!r.ready_condition.empty()) families.emplace_back("ready");
    for (const std::string& family : families) {
      const std::string prefix = NodeLeaseNameIn(family, rid, "");
      if (names.own_prefixes.find("'" + prefix + "'") != std::string::npos) continue;
      names.own_prefixes += (names.own_prefixes.empty() ? "'" : ", '") + prefix + "'";
      if (names.example.empty()) names.example = prefix + "<node>";
    }
    if (r.rollout && rids.find(rid) == std::string::npos) rids += (rids.empty() ? "" : "|") + rid;
  }
  names.own_prefixes = "[" + names.own_prefixes + "]";
  names.slot_pattern = rids.empty() ? "^$" : "^nodehook-rollout-(" + rids + ")-slot-[0-9]+$";
  return names;
}

// The singleton Lease: taken only when free, kept and released by its holder, for a bounded time.
void AddSingletonLeaseRules(Policy& p, const Config& config, const std::string& old_mine, const std::string& new_mine) {
  p.validations.push_back(
      {"variables.kind != 'singleton' || (request.operation == 'CREATE' && " + new_mine +
           ") || (request.operation == 'UPDATE' && (" + new_mine + " ? (" + old_mine +
           " || variables.old_holder == '') : (variables.new_holder == '' && " + old_mine + ")))",
       "",
       "'node ' + variables.node + ' may take the singleton Lease only when it is free (it is held by ' + "
       "variables.old_holder + '; the steward frees it once it expired), and keep or release it only while it "
       "holds it'"});
  const int bound = std::max(config.tuning.lease_duration_seconds, 1);
  p.validations.push_back(
      {"variables.kind != 'singleton' || request.operation == 'DELETE' || variables.duration <= " +
           std::to_string(bound),
       "nodehook agents may hold the singleton Lease for at most " + std::to_string(bound) +
           " seconds at a time (tuning.lease_duration_seconds)",
       ""});
}

// Each Lease's kind comes from its name, never from a label the writer chose: the singleton
// Lease; the own node Leases (named after the token's node); other node Leases (another node's,
// or an earlier version's hashed name); the rollouts' slots; nothing else.
Policy LeasesPolicy(const Config& config, const PolicySubject& subject) {
  Policy p;
  p.name = subject.name + "-node-bound-leases";
  p.comment =
      "Leases, each judged by its name: the singleton Lease taken only when free, kept and released by its holder, "
      "for a bounded duration; node Leases (rollouts', ready conditions' records) only in the own node's name; "
      "slots only renewed or released by the node they were granted to.";
  p.namespace_name = LeaseNamespaceFor(config, subject);
  p.resource_rules.emplace_back(
      "{apiGroups: [\"coordination.k8s.io\"], apiVersions: [\"*\"], resources: [\"leases\"], operations: [\"*\"]}");
  const LeaseNames names = LeaseNamesOf(config);
  const bool singleton = std::any_of(config.resources.begin(), config.resources.end(),
                                     [](const WatchedResource& r) { return r.singleton; });
  const std::string election =
      singleton ? "variables.name == '" + config.tuning.lease_name + "'" : std::string("false");
  p.variables = {
      {"lease", "request.operation == 'DELETE' ? oldObject : object"},
      {"name", "variables.lease.metadata.name"},
      {"own_names", names.own_prefixes + ".map(p, p + variables.node)"},
      {"kind", election + " ? 'singleton' : variables.name in variables.own_names ? 'own' : " + names.own_prefixes +
                   ".exists(p, variables.name.startsWith(p)) ? 'node' : variables.name.matches('" + names.slot_pattern +
                   "') ? 'slot' : ''"},
      {"old_holder", "oldObject != null && has(oldObject.spec.holderIdentity) ? oldObject.spec.holderIdentity : ''"},
      {"new_holder", "object != null && has(object.spec.holderIdentity) ? object.spec.holderIdentity : ''"},
      {"duration", "object != null && has(object.spec.leaseDurationSeconds) ? object.spec.leaseDurationSeconds : 0"},
      {"labels_kept",
       "request.operation != 'UPDATE' || (has(object.metadata.labels) ? object.metadata.labels : {}) == "
       "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})"},
  };
  const std::string old_mine = "(variables.old_holder != '' && " + CelNamesNode("variables.old_holder") + ")";
  const std::string new_mine = "(variables.new_holder != '' && " + CelNamesNode("variables.new_holder") + ")";
  const int max_slot = std::max(MaxSlotLeaseSeconds(config), 1);
  const std::string own_example = names.example.empty() ? std::string("none in this config") : names.example;
  p.validations.push_back({"variables.labels_kept", "nodehook agents may not change a Lease's labels", ""});
  p.validations.push_back(
      {"variables.kind != ''", "",
       "'nodehook agents write no Lease but " +
           (singleton ? "the singleton Lease " + config.tuning.lease_name + ", " : std::string()) +
           "their own node Leases (" + own_example +
           ") and the rollout slots granted to them, not ' + variables.name + ' (rollout coordinators run in the "
           "steward)'"});
  if (singleton) AddSingletonLeaseRules(p, config, old_mine, new_mine);
  p.validations.push_back(
      {"variables.kind != 'own' || request.operation == 'DELETE' || "
       "(variables.new_holder == variables.node && variables.duration <= 86400)",
       "",
       "'node ' + variables.node + ' may write its own node Lease only as its holder, for at most a day, not for ' + "
       "variables.new_holder"});
  p.validations.push_back(
      {"variables.kind != 'node' || (request.operation != 'CREATE' && " + old_mine +
           " && (request.operation == 'DELETE' || (variables.new_holder == variables.node && "
           "variables.duration <= 86400)))",
       "",
       "'node ' + variables.node + ' may write only its own node Lease (' + variables.own_names.join(', ') + "
       "'), not ' + variables.name + (variables.old_holder == '' ? '' : ' (held by ' + variables.old_holder + ')')"});
  p.validations.push_back(
      {"variables.kind != 'slot' || (request.operation == 'UPDATE' && " + old_mine + " && (" + new_mine +
           " || variables.new_holder == ''))",
       "",
       "'node ' + variables.node + ' may only renew or release a rollout slot granted to it (this one is held by ' "
       "+ (variables.old_holder == '' ? 'nobody' : variables.old_holder) + '); the steward grants slots'"});
  p.validations.push_back(
      {"variables.kind != 'slot' || request.operation != 'UPDATE' || variables.duration <= " +
           std::to_string(max_slot),
       "nodehook agents may hold a rollout slot for at most " + std::to_string(max_slot) +
           " seconds at a time (the config's longest slot lease or soak)",
       ""});
  return p;
}

// With prefixes: the Node itself may change only in the labels, annotations and taints under
// them (`ours` is the CEL test of a key); nothing else of its metadata or spec.
void AddNodeMetadataRules(Policy& p, const std::function<std::string(const std::string&)>& ours,
                          const std::function<std::string(const std::string&)>& ours_annotation,
                          const std::string& prefix_names, bool cordons) {
  for (const char* field : {"labels", "annotations"}) {
    const std::string f = field;
    p.variables.emplace_back(f + "_before", "oldObject != null && has(oldObject.metadata." + f + ") ? oldObject.metadata." + f + " : {}");
    p.variables.emplace_back(f + "_after", "object != null && has(object.metadata." + f + ") ? object.metadata." + f + " : {}");
  }
  p.variables.emplace_back("meta_before", "oldObject != null ? oldObject.metadata : {}");
  p.variables.emplace_back("meta_after", "object != null ? object.metadata : {}");
  p.variables.emplace_back("spec_before", "oldObject != null && has(oldObject.spec) ? oldObject.spec : {}");
  p.variables.emplace_back("spec_after", "object != null && has(object.spec) ? object.spec : {}");
  p.variables.emplace_back("taints_before", "'taints' in variables.spec_before ? variables.spec_before.taints : []");
  p.variables.emplace_back("taints_after", "'taints' in variables.spec_after ? variables.spec_after.taints : []");
  const std::string refusal = "'node ' + variables.node + ' may change only the labels, annotations and taints under "
                              "its config\\'s prefixes (" + prefix_names + ")" +
                              (cordons ? std::string(" and spec.unschedulable") : "") + ", not ";
  for (const char* field : {"labels", "annotations"}) {
    const std::string before = std::string("variables.") + field + "_before", after = std::string("variables.") + field + "_after";
    const auto& mine = std::string(field) == "annotations" ? ours_annotation : ours;
    p.validations.push_back(
        {before + ".all(k, " + mine("k") + " || (k in " + after + " && " + after + "[k] == " + before + "[k])) && " +
             after + ".all(k, " + mine("k") + " || k in " + before + ")",
         "", refusal + "other " + field + "'"});
  }
  p.validations.push_back(
      {"variables.taints_before.all(t, " + ours("t.key") + " || variables.taints_after.exists(n, n == t)) && "
       "variables.taints_after.all(t, " + ours("t.key") + " || variables.taints_before.exists(o, o == t))",
       "", refusal + "other taints'"});
  // The rest of the Node as it was (managedFields and resourceVersion move with every write).
  const std::string unchanged = "['labels', 'annotations', 'managedFields', 'resourceVersion', 'generation']";
  p.validations.push_back(
      {"variables.meta_after.all(k, k in " + unchanged +
           " || (k in variables.meta_before && variables.meta_after[k] == variables.meta_before[k])) && "
           "variables.meta_before.all(k, k in " + unchanged + " || k in variables.meta_after)",
       "", refusal + "the rest of its metadata'"});
  // A rollout's cordon: spec.unschedulable too (the mark is one of the annotations above).
  const std::string free = cordons ? "['taints', 'unschedulable']" : "['taints']";
  p.validations.push_back(
      {"variables.spec_after.all(k, k in " + free + " || (k in variables.spec_before && "
       "variables.spec_after[k] == variables.spec_before[k])) && "
       "variables.spec_before.all(k, k in " + free + " || k in variables.spec_after)",
       "", refusal + "the rest of its spec'"});
}

// The API server stores what a write through nodes/status sends in metadata (labels included:
// the kubelet relies on it) and in every status field. So through /status the metadata stays as it
// was, and in every write the status keeps all but its conditions (the addresses, allocatable,
// volumes and nodeInfo.bootID, which the reboot proof reads, are the kubelet's).
void AddNodeStatusRules(Policy& p, const std::string& names) {
  p.variables.emplace_back("status_before", "oldObject != null && has(oldObject.status) ? oldObject.status : {}");
  p.variables.emplace_back("status_after", "object != null && has(object.status) ? object.status : {}");
  p.validations.push_back(
      {"variables.status_after.all(k, k == 'conditions' || (k in variables.status_before && "
       "variables.status_after[k] == variables.status_before[k])) && "
       "variables.status_before.all(k, k == 'conditions' || k in variables.status_after)",
       "", "'node ' + variables.node + ' may change only the conditions its config keeps (" + names +
               ") in its Node\\'s status, not the kubelet\\'s other status fields'"});
  const std::string moving = "['managedFields', 'resourceVersion', 'generation']";
  p.validations.push_back(
      {"variables.subresource != 'status' || (object.metadata.all(k, k in " + moving +
           " || (k in oldObject.metadata && object.metadata[k] == oldObject.metadata[k])) && "
           "oldObject.metadata.all(k, k in " + moving + " || k in object.metadata))",
       "", "'node ' + variables.node + ' may not change its Node\\'s metadata through nodes/status'"});
}

// Node outputs (outputs/node_outputs_writer.h): the agents write their own Node only. Its status:
// only the conditions their config keeps (derived ones, and those under its prefixes). With
// prefixes, the Node itself too: only the labels, annotations and taints under the prefixes; the
// rest of its metadata and spec stays as it was.
Policy NodesPolicy(const std::vector<const WatchedResource*>& resources, const PolicySubject& subject) {
  Policy p;
  p.name = subject.name + "-node-bound-nodes";
  p.resource_rules.emplace_back(
      "{apiGroups: [\"\"], apiVersions: [\"*\"], resources: [\"nodes\", \"nodes/status\"], operations: [\"*\"]}");
  std::string types, prefixes, names, prefix_names;  // CEL lists, and the same for people
  bool cordons = false;
  for (const WatchedResource* r : resources) {
    cordons = cordons || (r->rollout && r->rollout->Cordons());
    if (!r->node_condition.empty()) {
      types += (types.empty() ? "'" : ", '") + r->node_condition + "'";
      names += (names.empty() ? "" : ", ") + r->node_condition;
    }
    for (const std::string& prefix : r->node_output_prefixes) {
      prefixes += (prefixes.empty() ? "'" : ", '") + prefix + "'";
      names += (names.empty() ? "" : ", ") + prefix + "*";
      prefix_names += (prefix_names.empty() ? "" : ", ") + prefix + "*";
    }
  }
  const bool metadata = !prefixes.empty() || cordons;
  std::string annotation_prefixes = prefixes;
  if (cordons) {
    annotation_prefixes += (annotation_prefixes.empty() ? "'" : ", '") + std::string(kCordonMarkPrefix) + "'";
    prefix_names += (prefix_names.empty() ? "" : ", ") + std::string(kCordonMarkPrefix) + "* annotations";
  }
  types = "[" + types + "]";
  prefixes = "[" + prefixes + "]";
  annotation_prefixes = "[" + annotation_prefixes + "]";
  p.comment = metadata ? "Node outputs and a rollout's cordon: only the own Node, and there only the conditions, "
                         "labels, annotations and taints the config keeps" +
                             std::string(cordons ? ", the cordon and its mark." : ".")
                       : "Node outputs: only the own Node's status, and there only the conditions the config keeps.";
  const auto ours = [&prefixes](const std::string& key) { return prefixes + ".exists(p, " + key + ".startsWith(p))"; };
  const auto ours_annotation = [&annotation_prefixes](const std::string& key) {
    return annotation_prefixes + ".exists(p, " + key + ".startsWith(p))";
  };
  const auto others = [&](const std::string& node) {
    return node + " != null && has(" + node + ".status) && has(" + node + ".status.conditions) ? " + node +
           ".status.conditions.filter(c, !(c.type in " + types + ") && !" + ours("c.type") + ") : []";
  };
  p.variables = {
      {"subresource", "has(request.subResource) ? request.subResource : ''"},
      {"others_before", others("oldObject")},
      {"others_after", others("object")},
  };
  p.validations.push_back(
      {std::string("request.operation == 'UPDATE' && (variables.subresource == 'status'") +
           (metadata ? " || variables.subresource == '')" : ")"),
       "",
       "'nodehook agents only update " + std::string(metadata ? "a Node or its status" : "the status of a Node") +
           ", they do not ' + request.operation + (variables.subresource == '' ? ' a Node' : ' its ' + "
           "variables.subresource)"});
  p.validations.push_back({"request.name == variables.node", "",
                           "'node ' + variables.node + ' " + std::string(kOtherNodeRefusal) +
                               " (the Node ' + request.name + ')'"});
  p.validations.push_back({"variables.others_before == variables.others_after", "",
                           "'node ' + variables.node + ' may change only the conditions its config keeps (" + names +
                               "), not those of the kubelet or others'"});
  AddNodeStatusRules(p, names);
  if (metadata) AddNodeMetadataRules(p, ours, ours_annotation, prefix_names, cordons);
  return p;
}

Policy EventsPolicy(const PolicySubject& subject) {
  Policy p;
  p.name = subject.name + "-node-bound-events";
  p.comment = "Events: created only in the own node's name, and about a Node only about the own one.";
  p.resource_rules.emplace_back(
      "{apiGroups: [\"events.k8s.io\"], apiVersions: [\"*\"], resources: [\"events\"], operations: [\"*\"]}");
  p.resource_rules.emplace_back(
      "{apiGroups: [\"\"], apiVersions: [\"*\"], resources: [\"events\"], operations: [\"*\"]}");
  // events.k8s.io/v1 calls it regarding, core/v1 involvedObject: the same stored field.
  p.variables = {
      {"about",
       "object == null ? {} : request.resource.group == 'events.k8s.io' ? "
       "(has(object.regarding) ? object.regarding : {}) : (has(object.involvedObject) ? object.involvedObject : {})"},
  };
  p.validations.push_back({"request.operation == 'CREATE'", "",
                           "'nodehook agents only create Events, they do not ' + request.operation + ' them'"});
  p.validations.push_back(
      {"has(object.reportingInstance) && object.reportingInstance == variables.node", "",
       "'node ' + variables.node + ' " + std::string(kOtherNodeRefusal) +
           " (reportingInstance ' + (has(object.reportingInstance) ? object.reportingInstance : 'unset') + ')'"});
  p.validations.push_back(
      {"!('kind' in variables.about) || variables.about.kind != 'Node' || "
       "('name' in variables.about && variables.about.name == variables.node)",
       "", "'node ' + variables.node + ' " + std::string(kOtherNodeRefusal) + " (an Event about another Node)'"});
  return p;
}

}  // namespace

std::string LeaseNamespaceFor(const Config& config, const PolicySubject& subject) {
  return config.tuning.lease_namespace.empty() ? subject.namespace_name : config.tuning.lease_namespace;
}

int MaxSlotLeaseSeconds(const Config& config) {
  int longest = 0;
  for (const auto& r : config.resources) {
    if (!r.rollout) continue;
    longest = std::max(longest, static_cast<int>(std::max(r.rollout->slot_lease, r.rollout->soak).count()));
    // A slot held through a reboot: the reboot's timeout and a lease.
    if (r.rollout->reboot) {
      longest = std::max(longest, static_cast<int>((r.rollout->reboot->timeout + r.rollout->slot_lease).count()));
    }
  }
  return longest;
}

bool AgentsWriteAcrossNodes(const Config& config) {
  if (config.tuning.cross_node_writes != "agents") return false;
  return std::any_of(config.resources.begin(), config.resources.end(), [](const WatchedResource& r) {
    return r.finalizer || r.singleton || r.rollout.has_value() || !r.ready_condition.empty();
  });
}

std::string NodeBoundPolicyYaml(const Config& config, const PolicySubject& subject) {
  std::vector<const WatchedResource*> finalizer, singleton, outputs;
  bool leases = false;
  for (const auto& r : config.resources) {
    if (r.singleton) singleton.push_back(&r);
    if (r.finalizer && !r.singleton) finalizer.push_back(&r);
    // A rollout's cordon is a write of the own Node, as node outputs are.
    if (!r.node_condition.empty() || !r.node_output_prefixes.empty() || (r.rollout && r.rollout->Cordons())) {
      outputs.push_back(&r);
    }
    // A ready condition's record is a node Lease in the node's name, as a rollout's is.
    leases = leases || r.singleton || r.rollout.has_value() || !r.ready_condition.empty();
  }
  std::vector<Policy> policies;
  if (!finalizer.empty()) policies.push_back(ObjectsPolicy(finalizer, subject));
  if (!singleton.empty()) policies.push_back(SingletonPolicy(singleton, config, subject));
  if (leases) policies.push_back(LeasesPolicy(config, subject));
  if (!outputs.empty()) policies.push_back(NodesPolicy(outputs, subject));
  policies.push_back(EventsPolicy(subject));
  std::ostringstream y;
  y << "# Generated by `nodehook rbac`: the node-bound admission rules (docs/security.md).\n";
  for (size_t i = 0; i < policies.size(); ++i) {
    if (i > 0) y << "---\n";
    y << Render(policies[i], subject);
  }
  return y.str();
}

}  // namespace nodehook
