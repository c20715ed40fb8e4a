#include "agent/kubectl/rollout_view.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "agent/object/object_facts.h"
#include "agent/rollout/rules/rollout_cordons.h"
#include "agent/rollout/rules/window.h"

namespace nodehook {

WindowNow KubectlWindowNow(const std::vector<RolloutWindow>& windows, int64_t now_ms) {
  // The agents' own judgement, with the zones of this machine's zoneinfo (or $TZDIR).
  const char* tzdir = std::getenv("TZDIR");
  return WindowsNow(CompileWindows(windows, tzdir && *tzdir ? tzdir : kDefaultZoneInfoDir), now_ms);
}

std::string RolloutView::Describe() const {
  return resource_id + " " + (spec.namespace_name.empty() ? "" : spec.namespace_name + "/") + spec.name;
}

Result<std::vector<RolloutLease>> ResourceLeases(const std::vector<RolloutLease>& all, const ObjectSpec& spec,
                                                 std::string* resource_id) {
  std::set<std::string> ids;
  bool scoped = false;  // a config entry for the object's own namespace has a rollout of its own
  for (const RolloutLease& lease : all) {
    if (!MatchesResource(spec, lease.resource, nullptr)) continue;
    if (!lease.scope.empty() && lease.scope != spec.namespace_name) continue;  // another entry's rollout
    ids.insert(lease.resource);
    scoped = scoped || !lease.scope.empty();
  }
  if (ids.empty()) {
    return NotFoundError("no rollout Leases for " + spec.plural + (spec.group.empty() ? "" : "." + spec.group) +
                         ": the resource has no rollout policy, or no agent has started with it yet");
  }
  if (ids.size() > 1) {
    std::string names;
    for (const auto& id : ids) names += (names.empty() ? "" : ", ") + id;
    return InvalidError("\"" + spec.plural + "\" names several resources with rollouts (" + names +
                        "): spell RESOURCE.GROUP");
  }
  *resource_id = *ids.begin();
  const std::string scope = scoped ? spec.namespace_name : "";
  std::vector<RolloutLease> out;
  for (const RolloutLease& lease : all) {
    if (lease.resource == *resource_id && lease.scope == scope) out.push_back(lease);
  }
  std::sort(out.begin(), out.end(), [](const RolloutLease& a, const RolloutLease& b) { return a.name < b.name; });
  return out;
}

Result<RolloutView> ReadRollout(RolloutCluster& cluster, const ObjectSpec& spec,
                                const std::function<int64_t()>& server_now_ms, const WindowJudge& windows) {
  RolloutView view;
  view.spec = spec;
  Result<std::vector<RolloutLease>> all = cluster.ListRolloutLeases();
  if (!all.ok()) return all.status();
  const int64_t now_ms = server_now_ms();  // the Date of the list's answer, on the clock the holders wrote by
  view.now_ms = now_ms;
  Result<std::vector<RolloutLease>> leases = ResourceLeases(*all, spec, &view.resource_id);
  if (!leases.ok()) return leases.status();
  view.spec = ResolvedSpec(spec, view.resource_id);
  bool have_policy = false;
  for (const RolloutLease& lease : *leases) {
    if (lease.kind != "node" || lease.policy_json.empty()) continue;
    Result<SharedPolicy> shared = ParseSharedPolicyJson(lease.policy_json);
    if (!shared.ok()) continue;
    view.shared = std::move(shared).value();
    view.policy_node = lease.holder;
    view.rid = RolloutId(lease.scope.empty() ? view.resource_id : view.resource_id + " in " + lease.scope);
    have_policy = true;
    break;
  }
  if (!have_policy) return NotFoundError("no node Lease of " + view.resource_id + " carries a readable policy");
  view.board = BoardFromLeases(*leases, now_ms);

  Result<KubeObject> object = cluster.GetObject(SpecObject(view.spec, view.spec.version));
  if (!object.ok()) {
    if (object.status().code() == StatusCode::kNotFound) return NotFoundError(view.Describe() + " not found");
    return object.status();
  }
  view.object = std::move(object).value();
  FactsPtr facts = ReadFacts(view.object.json, FactsSpec{view.shared.ignored_paths, view.shared.node_selector_path});
  if (!facts->readable.ok()) return InvalidError(view.Describe() + ": " + facts->readable.message());
  view.state.uid = view.object.meta.uid;
  view.state.state = facts->digest;
  view.state.paused = facts->rollout_paused;
  view.state.resume_state = facts->rollout_resume;
  if (!view.shared.node_selector_path.empty()) view.state.selector = RolloutSelector(facts->selector);

  Result<NodeLabelMap> nodes = cluster.NodeLabels();
  if (!nodes.ok()) return nodes.status();
  for (const auto& [node, labels] : *nodes) {
    if (labels.count(view.shared.policy.hold_label) > 0) view.held.push_back(node);
  }
  // The shared policy does not say whether the rollout cordons: a rollout that does not has no
  // marks to find.
  Result<std::vector<KubeObject>> cordoned = cluster.CordonedNodes();
  if (!cordoned.ok()) return cordoned.status();
  view.board.cordoned = RolloutCordons(view.rid, *cordoned);
  view.window = windows(view.shared.policy.windows, now_ms);
  return view;
}

}  // namespace nodehook
