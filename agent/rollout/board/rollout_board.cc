#include "agent/rollout/board/rollout_board.h"

#include "agent/base/log.h"

namespace nodehook {

std::optional<RolloutLease> RolloutBoard::Take(const KubeObject& object) {
  auto lease = ParseRolloutLease(object.json);
  if (!lease.ok()) {
    Log(LogLevel::kWarn, "rollout lease unreadable",
        {{"lease", object.meta.Key()}, {"error", lease.status().ToString()}, {"next", "ignore it"}});
    return std::nullopt;
  }
  auto& seen = leases_[lease->name];
  if (seen.deleted || seen.lease.resource_version != lease->resource_version) seen.changed_at = clock_.Now();
  const bool named = lease->kind == "slot" && !lease->holder.empty() &&
                     (seen.deleted || seen.lease.holder != lease->holder || seen.lease.uid != lease->uid ||
                      seen.lease.state != lease->state);
  seen.deleted = false;
  seen.lease = std::move(lease).value();
  return named ? std::optional<RolloutLease>(seen.lease) : std::nullopt;
}

void RolloutBoard::Tell(const std::vector<RolloutLease>& named) const {
  if (on_slot_named_) {
    for (const RolloutLease& slot : named) on_slot_named_(slot);
  }
  if (on_change_) on_change_();
}

void RolloutBoard::Forget(Seen& seen) {
  if (seen.deleted) return;
  seen.deleted = true;
  seen.changed_at = clock_.Now();
  seen.lease.resource_version.clear();  // taken again by a create
}

bool RolloutBoard::Expired(const Seen& seen, TimePoint now) {
  if (!seen.deleted) return false;
  // A slot counts as held for its lease from the deletion, a node for kDeletedNodeKept.
  Duration kept = seen.lease.kind == "slot" ? Duration(std::chrono::seconds(seen.lease.lease_duration_seconds))
                                            : kDeletedNodeKept;
  return now - seen.changed_at >= kept;
}

void RolloutBoard::Prune() {
  // Deleted Leases past their time leave the board, so nodes that come and go do not pile up.
  const TimePoint now = clock_.Now();
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (!Expired(it->second, now)) {
      ++it;
      continue;
    }
    pruned_nodes_ += it->second.lease.kind == "node";
    it = leases_.erase(it);
  }
}

uint64_t RolloutBoard::departures() const {
  MutexLock lock(&mu_);
  // Those pruned, and those past their time but not yet pruned (pruning waits for a watch event).
  uint64_t gone = pruned_nodes_;
  const TimePoint now = clock_.Now();
  for (const auto& [name, seen] : leases_) gone += seen.lease.kind == "node" && Expired(seen, now);
  return gone;
}

void RolloutBoard::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>&) {
  std::vector<RolloutLease> named;
  {
    MutexLock lock(&mu_);
    std::map<std::string, Seen> before = std::move(leases_);
    leases_.clear();
    for (const auto& item : items) {
      auto old = before.find(item->meta.name);
      if (old != before.end()) {
        leases_[item->meta.name] = old->second;  // keeps when it last changed
        before.erase(old);
      }
      if (auto slot = Take(*item)) named.push_back(std::move(*slot));
    }
    for (auto& [name, seen] : before) {  // deleted while the watch was away
      Forget(seen);
      leases_[name] = seen;
    }
    Prune();
    ++lists_;
  }
  Tell(named);
}

void RolloutBoard::OnObject(ObjectPtr object) {
  std::optional<RolloutLease> named;
  {
    MutexLock lock(&mu_);
    named = Take(*object);
    Prune();
  }
  Tell(named ? std::vector<RolloutLease>{*named} : std::vector<RolloutLease>{});
}

void RolloutBoard::OnDeleted(ObjectPtr last_state) {
  {
    MutexLock lock(&mu_);
    auto it = leases_.find(last_state->meta.name);
    if (it != leases_.end()) Forget(it->second);
    Prune();
  }
  Tell({});
}

BoardView RolloutBoard::View() const {
  MutexLock lock(&mu_);
  BoardView view;
  TimePoint now = clock_.Now();
  for (const auto& [name, seen] : leases_) {
    if (!Expired(seen, now)) PutOnBoard(seen.lease, now - seen.changed_at, &view);
  }
  return view;
}

RolloutLease RolloutBoard::Lease(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = leases_.find(name);
  return it == leases_.end() ? RolloutLease{} : it->second.lease;
}

bool RolloutBoard::Deleted(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = leases_.find(name);
  return it != leases_.end() && it->second.deleted;
}

bool RolloutBoard::listed() const {
  MutexLock lock(&mu_);
  return lists_ > 0;
}

uint64_t RolloutBoard::lists() const {
  MutexLock lock(&mu_);
  return lists_;
}

}  // namespace nodehook
