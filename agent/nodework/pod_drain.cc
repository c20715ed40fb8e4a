#include "agent/nodework/pod_drain.h"

#include <algorithm>

namespace nodehook {

Result<DrainRound> PodDrain::Round() {
  Result<std::vector<PodOnNode>> pods = api_.Pods(options_.pod_selector);
  if (!pods.ok()) return pods.status();
  DrainRound round;
  const TimePoint now = clock_.Now();
  TimePoint next = now + kDrainPoll;
  std::set<std::string> present;
  for (const PodOnNode& pod : *pods) {
    if (pod.daemon_set || pod.mirror || pod.finished || pod.Key() == options_.self) continue;
    present.insert(pod.uid);
    round.left.push_back(pod.Key());
    if (pod.terminating) continue;  // evicted (by us or someone): waited for
    auto refused = refused_.find(pod.uid);
    if (refused != refused_.end() && refused->second.again > now) {
      next = std::min(next, refused->second.again);
      continue;
    }
    Status evicted = api_.Evict(pod, options_.grace_period_seconds);
    ++round.evictions;
    if (evicted.ok() || evicted.code() == StatusCode::kNotFound || evicted.code() == StatusCode::kConflict) {
      // Evicted; or gone, or replaced by a new pod of that name (seen in the next round).
      refused_.erase(pod.uid);
      continue;
    }
    Refused& r = refused_[pod.uid];
    r.backoff = r.backoff == Duration::zero() ? kEvictionBackoffMin : std::min(r.backoff * 2, kEvictionBackoffMax);
    r.again = now + r.backoff;
    next = std::min(next, r.again);
    round.blocked = pod.Key() + ": " + evicted.message();
    if (announced_.insert(pod.uid).second) round.newly_blocked.push_back(round.blocked);
  }
  for (auto it = refused_.begin(); it != refused_.end();) {
    it = present.count(it->first) ? std::next(it) : refused_.erase(it);
  }
  std::sort(round.left.begin(), round.left.end());
  round.next = std::max(next - now, Duration::zero());
  return round;
}

}  // namespace nodehook
