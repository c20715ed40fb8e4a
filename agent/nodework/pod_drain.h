// PodDrain: one drain of this node, in rounds, with kubectl drain's rules. It drains the pods
// present when it started, and a pod that comes later only if it does not tolerate the cordon (a
// pod that does, such as many operators' and CNI agents', may be placed here again at once: evicting
// its replacements would never end). It never evicts DaemonSet pods, mirror pods, finished pods,
// nodehook's own steward (kStewardLabel) or the agent's own pod. As kubectl, it refuses pods that declare no controller (unless `force`) and
// pods with emptyDir data (unless `delete_emptydir_data`): while any is there nothing is evicted,
// and each is named as the drain's blocker until it goes or the drain times out.
// Each round asks the Eviction API to evict each pod not asked for before. Pods a disruption
// budget refused (429) are probed again one after another, from where the last probe stopped,
// until one is refused: one call a round while the budgets hold, with a backoff of 1 s doubling to
// 10 s between probing rounds that evict nothing. A pod already terminating is waited for, by uid:
// a new pod of the same name is another pod. The drain is done when none of its pods is left.
// The node steps (node_steps.h) record each round's result, so a restarted agent starts a new
// PodDrain where the old one stood (DrainOptions::resumed_left).
// Not thread-safe: one drain is driven by one worker at a time.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/nodework/node_api.h"

namespace nodehook {

struct DrainOptions {
  std::string pod_selector;       // "" = every pod
  int grace_period_seconds = -1;  // -1 = each pod's own
  std::string self;               // "namespace/name" of the agent's pod; never evicted
  bool force = false;                 // evict pods that declare no controller too
  bool delete_emptydir_data = false;  // evict pods with emptyDir volumes too
  // A drain resumed after a restart: the pods ("namespace/name") its record said were left. A pod
  // that tolerates the cordon and is not among them came after the drain started. nullopt: new.
  std::optional<std::set<std::string>> resumed_left{};
};

struct DrainRound {
  std::vector<std::string> left;     // the pods still to go, "namespace/name", sorted
  // Refused for the first time in this drain: "namespace/name: why" (for an Event).
  std::vector<std::string> newly_blocked;
  std::string blocked;               // the last refusal's "namespace/name: why", "" = none now
  int evictions = 0;                 // Eviction calls made this round, refusals included
  Duration next{0};                  // when the next round is due
  bool done() const { return left.empty(); }
};

inline constexpr Duration kDrainPoll = std::chrono::seconds(2);
inline constexpr Duration kDrainQuickLook = std::chrono::milliseconds(500);  // after an eviction
inline constexpr Duration kEvictionBackoffMin = std::chrono::seconds(1);
inline constexpr Duration kEvictionBackoffMax = std::chrono::seconds(10);

class PodDrain {
 public:
  PodDrain(NodeApi& api, Clock& clock, DrainOptions options) : api_(api), clock_(clock), options_(std::move(options)) {}

  // One round. Not ok: the pods could not be listed (the round is tried again).
  Result<DrainRound> Round();

 private:
  NodeApi& api_;
  Clock& clock_;
  const DrainOptions options_;
  // Whether `pod` is one this drain evicts and waits for; adds it to members_ when it is.
  bool Member(const PodOnNode& pod, bool first_round);
  // Why kubectl drain would refuse to evict `pod` with these options; "" = it would not.
  std::string KubectlRefusal(const PodOnNode& pod) const;
  // The listed pods this drain evicts and waits for (named in round->left); forgets the others.
  std::vector<const PodOnNode*> Members(const std::vector<PodOnNode>& pods, DrainRound* round);
  // Whether a pod kubectl would refuse is there (named in `round`): then nothing is evicted.
  bool RefusedAsKubectl(const std::vector<const PodOnNode*>& mine, DrainRound* round);
  void Refuse(const PodOnNode& pod, const Status& evicted, DrainRound* round);
  // Probes the pods refused before, when due; whether one was evicted.
  bool Probe(const std::vector<const PodOnNode*>& refused_before, TimePoint now, DrainRound* round);

  bool started_ = false;             // a round has listed the pods
  std::set<std::string> members_;    // pod uids this drain evicts and waits for
  std::set<std::string> refused_;    // pod uids refused, not evicted since
  std::set<std::string> announced_;  // pod uids whose refusal was reported
  size_t probe_from_ = 0;            // where the next probe of the refused pods starts
  TimePoint probe_at_{};             // not before
  Duration probe_backoff_{0};
  std::string last_blocked_;         // the last refusal, for the rounds that probe nothing
};

}  // namespace nodehook
