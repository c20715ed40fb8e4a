// RolloutView: one object's rollout as kubectl sees it, read from the API server alone (the
// Leases, the object, the Nodes) and judged with the agents' own rules (rollout/rules/rollout_judge.h), so what
// `kubectl nodehook rollout status` says a node waits for is what that node's agent decides.
//   - the resource: the Leases whose nodehook.io/rollout-resource annotation matches the spec
//     (plural, group if given); its version comes from there;
//   - the policy and the ignored paths: from the node Leases (SharedPolicyJson), since kubectl has
//     no config; the object's state digest is computed with those ignored paths;
//   - the board: BoardFromLeases (rollout/rules/board_view.h), the agents' own board with its one rule for a
//     live slot, each Lease aged by the API server's clock;
//   - holds: the Nodes that carry the policy's hold label.
// Slot expiry, soaks and windows are judged at `server_now_ms()`, asked once the Leases are
// listed: the API server's clock as the Date of that very answer tells it (a fake clock in
// tests), never this machine's. Pure apart from the cluster calls; thread-safe if the cluster is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agent/kubectl/object_spec.h"
#include "agent/kubectl/rollout_cluster.h"
#include "agent/rollout/rules/rollout_judge.h"

namespace nodehook {

// The seam for maintenance windows: whether `windows` are open at `now_ms` (tests pass a fake).
// KubectlWindowNow judges them with the agents' own rules (agent/rollout/rules/window.h), in the zones
// of this machine's zoneinfo (or $TZDIR).
using WindowJudge = std::function<WindowNow(const std::vector<RolloutWindow>& windows, int64_t now_ms)>;
WindowNow KubectlWindowNow(const std::vector<RolloutWindow>& windows, int64_t now_ms);

struct RolloutView {
  ObjectSpec spec;
  std::string resource_id;   // "widgets.example.com/v1"
  std::string policy_node;   // the node Lease the policy was read from
  std::string rid;           // the rollout's id (its Leases' and cordon marks' names)
  SharedPolicy shared;
  BoardView board;
  KubeObject object;
  RolloutObject state;       // uid, digest, paused, resume
  std::vector<std::string> held;  // nodes with the hold label
  WindowNow window;
  int64_t now_ms = 0;        // by the API server's clock

  std::string Describe() const;  // "widgets.example.com/v1 team-a/w1"
};

// The Leases of the spec's resource and that resource's id. kNotFound when none matches (the
// resource has no rollout policy, or no agent started yet); kInvalid when several resources do
// (e.g. widgets in two groups: spell the group).
Result<std::vector<RolloutLease>> ResourceLeases(const std::vector<RolloutLease>& all, const ObjectSpec& spec,
                                                 std::string* resource_id);

// Everything above. kNotFound for a missing rollout or object (the message says which).
Result<RolloutView> ReadRollout(RolloutCluster& cluster, const ObjectSpec& spec,
                                const std::function<int64_t()>& server_now_ms,
                                const WindowJudge& windows = KubectlWindowNow);

}  // namespace nodehook
