#include "agent/nodework/pod_drain.h"

#include <algorithm>

namespace nodehook {

namespace {

bool Gone(const Status& evicted) {
  // Evicted; or gone, or replaced by a new pod of that name (seen in the next round).
  return evicted.ok() || evicted.code() == StatusCode::kNotFound || evicted.code() == StatusCode::kConflict;
}

}  // namespace

bool PodDrain::Member(const PodOnNode& pod, bool first_round) {
  if (pod.daemon_set || pod.mirror || pod.finished || pod.steward || pod.Key() == options_.self) return false;
  if (members_.count(pod.uid) > 0) return true;
  const bool there_at_start =
      first_round && (!options_.resumed_left || options_.resumed_left->count(pod.Key()) > 0);
  // Came later and may be placed here despite the cordon: not this drain's.
  if (!there_at_start && pod.tolerates_cordon) return false;
  members_.insert(pod.uid);
  return true;
}

std::string PodDrain::KubectlRefusal(const PodOnNode& pod) const {
  if (!pod.controlled && !options_.force) {
    return "declares no controller, so nothing would bring it back (drain.force evicts it)";
  }
  if (pod.local_storage && !options_.delete_emptydir_data) {
    return "has emptyDir data, lost with it (drain.delete_emptydir_data evicts it)";
  }
  return "";
}

std::vector<const PodOnNode*> PodDrain::Members(const std::vector<PodOnNode>& pods, DrainRound* round) {
  const bool first_round = !started_;
  started_ = true;
  std::set<std::string> present;
  std::vector<const PodOnNode*> mine;
  for (const PodOnNode& pod : pods) {
    if (!Member(pod, first_round)) continue;
    present.insert(pod.uid);
    round->left.push_back(pod.Key());
    mine.push_back(&pod);
  }
  std::sort(round->left.begin(), round->left.end());
  for (auto it = members_.begin(); it != members_.end();) it = present.count(*it) ? std::next(it) : members_.erase(it);
  for (auto it = refused_.begin(); it != refused_.end();) it = present.count(*it) ? std::next(it) : refused_.erase(it);
  return mine;
}

bool PodDrain::RefusedAsKubectl(const std::vector<const PodOnNode*>& mine, DrainRound* round) {
  std::vector<std::string> refusals;
  for (const PodOnNode* pod : mine) {
    const std::string why = pod->terminating ? "" : KubectlRefusal(*pod);
    if (why.empty()) continue;
    refusals.push_back(pod->Key() + ": " + why);
    if (announced_.insert(pod->uid).second) round->newly_blocked.push_back(refusals.back());
  }
  if (refusals.empty()) return false;
  round->blocked = refusals.front();
  if (refusals.size() > 1) round->blocked += "; and " + std::to_string(refusals.size() - 1) + " more";
  round->next = kDrainPoll;
  return true;
}

void PodDrain::Refuse(const PodOnNode& pod, const Status& evicted, DrainRound* round) {
  refused_.insert(pod.uid);
  round->blocked = pod.Key() + ": " + evicted.message();
  if (announced_.insert(pod.uid).second) round->newly_blocked.push_back(round->blocked);
}

bool PodDrain::Probe(const std::vector<const PodOnNode*>& refused_before, TimePoint now, DrainRound* round) {
  if (refused_before.empty() || now < probe_at_) return false;
  const size_t n = refused_before.size();
  bool evicted_any = false;
  for (size_t k = 0; k < n; ++k) {
    const PodOnNode& pod = *refused_before[(probe_from_ + k) % n];
    Status evicted = api_.Evict(pod, options_.grace_period_seconds);
    ++round->evictions;
    if (Gone(evicted)) {
      refused_.erase(pod.uid);
      evicted_any = true;
      continue;
    }
    Refuse(pod, evicted, round);
    probe_from_ = (probe_from_ + k + 1) % n;
    break;
  }
  probe_backoff_ = evicted_any ? kEvictionBackoffMin
                               : std::min(std::max(probe_backoff_, kEvictionBackoffMin) * 2, kEvictionBackoffMax);
  probe_at_ = now + probe_backoff_;
  return evicted_any;
}

Result<DrainRound> PodDrain::Round() {
  Result<std::vector<PodOnNode>> pods = api_.Pods(options_.pod_selector);
  if (!pods.ok()) return pods.status();
  DrainRound round;
  const TimePoint now = clock_.Now();
  const std::vector<const PodOnNode*> mine = Members(*pods, &round);
  // As kubectl drain: while a pod it would refuse is there, nothing is evicted.
  if (RefusedAsKubectl(mine, &round)) return round;
  std::vector<const PodOnNode*> refused_before;  // refused in an earlier round, not terminating
  bool evicted_any = false;
  for (const PodOnNode* pod : mine) {
    if (pod->terminating) continue;  // evicted (by us or someone): waited for
    if (refused_.count(pod->uid)) {
      refused_before.push_back(pod);
      continue;
    }
    // A pod not asked for before: asked now, whatever the others' budgets said.
    Status evicted = api_.Evict(*pod, options_.grace_period_seconds);
    ++round.evictions;
    if (Gone(evicted)) {
      evicted_any = true;
    } else {
      Refuse(*pod, evicted, &round);
    }
  }
  // Pods refused before are probed one after another, starting where the last probe stopped,
  // until one is refused again: a budget that refused one mostly refuses its others too, so a
  // blocked drain costs one call a round, not one per pod. A round without an eviction doubles
  // the wait before the next probe (1 s to 10 s); an eviction resets it.
  evicted_any = Probe(refused_before, now, &round) || evicted_any;
  if (!refused_.empty() && probe_at_ <= now) {  // first refused this round: probed after the least wait
    probe_backoff_ = kEvictionBackoffMin;
    probe_at_ = now + probe_backoff_;
  }
  if (!round.blocked.empty()) {
    last_blocked_ = round.blocked;
  } else if (!refused_.empty()) {
    round.blocked = last_blocked_;  // still waiting on the last refusal
  }
  // Evicted pods mostly go within their grace period: looked for again soon.
  Duration next = evicted_any ? kDrainQuickLook : kDrainPoll;
  if (!refused_.empty()) next = std::min(next, std::max(probe_at_ - now, Duration::zero()));
  round.next = next;
  return round;
}

}  // namespace nodehook
