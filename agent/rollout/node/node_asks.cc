#include "agent/rollout/node/node_asks.h"

#include <algorithm>

#include "agent/object/essence.h"

namespace nodehook {

double AskPlace(const std::string& rid, const std::string& node) {
  // A 64-bit hash in 16 hex digits: its top 53 bits over 2^53.
  const uint64_t key = std::stoull(EssenceDigest(rid + "/" + node), nullptr, 16);
  return static_cast<double>(key >> 11) / static_cast<double>(uint64_t{1} << 53);
}

NodeAsks::NodeAsks(const std::string& rid, std::string node, const RolloutPolicy& policy, const BoardReader& board,
                   Clock& monotonic, std::function<int()> fleet_size)
    : rid_(rid),
      node_(std::move(node)),
      policy_(policy),
      board_(board),
      monotonic_(monotonic),
      fleet_size_(std::move(fleet_size)) {}

void NodeAsks::NoteGrant(const std::string& uid, const std::string& state, const std::string& version) {
  seen_[uid] = Seen{state, version};
}

AskAgain NodeAsks::Again(const BoardView& view, const std::string& uid, const std::string& state) {
  // The grant's version identifies it: each lapsed grant is asked again for once.
  std::optional<std::string> lapsed;
  for (const auto& s : view.slots) {
    if (s.live || s.holder != node_ || s.uid != uid || s.state != state) continue;
    lapsed = s.resource_version;  // still in its name, past its lease
  }
  auto seen = seen_.find(uid);
  if (seen != seen_.end()) {
    // The caller found no live slot of this node's for the object: a grant seen for the state
    // went untaken (lapsed, given to another node, deleted) before this node's worker came to it.
    if (!lapsed && seen->second.state == state) lapsed = seen->second.version;
    seen_.erase(seen);
  }
  if (lapsed) {
    auto [it, fresh] = asked_.try_emplace(uid, *lapsed);
    if (fresh || it->second != *lapsed) {
      it->second = *lapsed;
      return AskAgain::kLapsed;
    }
  }
  return board_.lists() > lists_written_ ? AskAgain::kRelisted : AskAgain::kNo;
}

std::optional<Duration> NodeAsks::Due(const std::string& uid, const NodeRequest& request, const NodeRequest* asked,
                                      AskAgain again) {
  if (asked && asked->state == request.state && again != AskAgain::kRelisted) return std::nullopt;
  const int fleet = fleet_size_ ? fleet_size_() : 0;
  if (fleet <= 1) return std::nullopt;
  const TimePoint now = monotonic_.Now();
  auto due = due_.find(uid);
  if (due == due_.end() || due->second.request.state != request.state) {
    const double asks_per_second = kAsksPerGrant * std::max(policy_.max_grants_per_second, 0.1);
    const Duration spread = std::min<Duration>(
        Duration(static_cast<int64_t>(1000.0 * static_cast<double>(fleet) / asks_per_second)), kAskSpreadMax);
    const auto after = static_cast<int64_t>(AskPlace(rid_, node_) * static_cast<double>(spread.count()));
    due = due_.insert_or_assign(uid, DueAt{request, now + Duration(after)}).first;
  }
  if (now >= due->second.at) return std::nullopt;  // Asking takes it out
  return due->second.at - now;
}

std::vector<std::pair<std::string, NodeRequest>> NodeAsks::TakeDueSoon(size_t room) {
  std::vector<std::pair<std::string, NodeRequest>> soon;
  const TimePoint by = monotonic_.Now() + kAskBatch;
  for (auto due = due_.begin(); due != due_.end() && soon.size() < room;) {
    if (due->second.at > by) {
      ++due;
      continue;
    }
    soon.emplace_back(due->first, due->second.request);
    due = due_.erase(due);
  }
  return soon;
}

void NodeAsks::Forget(const std::string& uid) {
  due_.erase(uid);
  seen_.erase(uid);
  asked_.erase(uid);
}

}  // namespace nodehook
