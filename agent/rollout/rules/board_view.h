// The rollout board: one resource's slot and node Leases as the rules (rollout_judge.h) read them,
// built the same way by both of its readers: the agent's gate (RolloutBoard, from its watch of
// the Leases) and kubectl (rollout_view.h, from one list).
//
// The one rule for a slot: it is live (held, not free) while
//     holderIdentity != ""  and  age < leaseDurationSeconds
// A release empties the holder; a holder that stops renewing lets the age pass the duration (a
// soaking slot's duration is what is left of its soak). `age` is how long ago the Lease last
// changed, measured by its reader on one clock; no reader compares two machines' wall clocks:
//   - the agent watches the Leases: the time since it first saw the Lease's resourceVersion, on
//     its own monotonic clock (client-go's leader election rule). A watch brings a change after
//     it happened, so this age is never above the true one: an agent never sees a slot free
//     before its holder's fence has stopped the hook (2/3 of the duration after its renewal).
//   - kubectl reads once and has no history: the API server's now (the Date of its answers)
//     minus spec.renewTime, which the holder writes by its estimate of the API server's clock
//     (kube/server_clock.h) too. Good to about a second (a Date has whole seconds); kubectl only
//     reports, it takes no slot.
// A reader that cannot tell the age (no readable renewTime) takes the slot as free.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {

// One slot as its reader sees it: `live` by the rule above.
struct SlotView {
  int slot = 0;
  std::string holder;
  std::string uid;
  std::string state;
  NodeStep phase = NodeStep::kRunning;
  bool live = false;
  // Of the Lease as observed: a take is conditioned on it. The initializer keeps six-field brace
  // initialisations free of -Wmissing-field-initializers.
  std::string resource_version{};
  std::string detail{};  // how far the holder's step got
};

struct BoardView {
  std::vector<SlotView> slots;
  // Every node that handles the resource (it has a node Lease), with its results by object uid.
  std::map<std::string, std::map<std::string, NodeResult>> nodes;
  // Their labels, as their node Leases say (absent or nullopt: unknown).
  std::map<std::string, std::optional<LabelMap>> labels;
  // The object states each node waits to run, by node and object uid (what the coordinator grants).
  std::map<std::string, std::map<std::string, NodeRequest>> requests;
  // The cordoned Nodes that carry this rollout's cordon marks, with the objects the marks name
  // ("namespace/name, ..."): disrupted by the rollout whether or not they hold a slot (a node whose
  // agent is away, a failed node kept cordoned). Known to the coordinator and kubectl, which read
  // the Nodes (coordinator/cordoned_nodes.h); empty on a node's own board.
  std::map<std::string, std::string> cordoned{};
};

// The rule. `age`: how long ago the slot Lease last changed, as its reader measured it (nullopt:
// it cannot tell).
bool SlotLive(const RolloutLease& slot, std::optional<Duration> age);

// Puts one Lease on the board: a slot Lease as a SlotView, live by SlotLive with `age`; a node
// Lease's results under its holder (a node Lease without a holder is nobody's, and left out).
void PutOnBoard(const RolloutLease& lease, std::optional<Duration> age, BoardView* board);

// A one-time reader's age of a Lease: `server_now_ms` (the API server's clock) minus its
// renewTime; nullopt when renewTime is not an RFC 3339 time.
std::optional<Duration> AgeByServerClock(const RolloutLease& lease, int64_t server_now_ms);

// The board of a one-time reader (kubectl): every Lease aged by AgeByServerClock.
BoardView BoardFromLeases(const std::vector<RolloutLease>& leases, int64_t server_now_ms);

}  // namespace nodehook
