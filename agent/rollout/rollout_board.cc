#include "agent/rollout/rollout_board.h"

#include "agent/base/log.h"

namespace nodehook {

void RolloutBoard::Take(const KubeObject& object) {
  auto lease = ParseRolloutLease(object.json);
  if (!lease.ok()) {
    Log(LogLevel::kWarn, "rollout lease unreadable",
        {{"lease", object.meta.Key()}, {"error", lease.status().ToString()}, {"next", "ignore it"}});
    return;
  }
  auto& seen = leases_[lease->name];
  if (seen.lease.resource_version != lease->resource_version) seen.changed_at = clock_.Now();
  seen.lease = std::move(lease).value();
}

void RolloutBoard::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>&) {
  MutexLock lock(&mu_);
  std::map<std::string, Seen> before = std::move(leases_);
  leases_.clear();
  for (const auto& item : items) {
    auto old = before.find(item->meta.name);
    if (old != before.end()) leases_[item->meta.name] = old->second;  // keeps when it last changed
    Take(*item);
  }
  listed_ = true;
}

void RolloutBoard::OnObject(ObjectPtr object) {
  MutexLock lock(&mu_);
  Take(*object);
}

void RolloutBoard::OnDeleted(ObjectPtr last_state) {
  MutexLock lock(&mu_);
  leases_.erase(last_state->meta.name);
}

BoardView RolloutBoard::View() const {
  MutexLock lock(&mu_);
  BoardView view;
  TimePoint now = clock_.Now();
  for (const auto& [name, seen] : leases_) PutOnBoard(seen.lease, now - seen.changed_at, &view);
  return view;
}

RolloutLease RolloutBoard::Lease(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = leases_.find(name);
  return it == leases_.end() ? RolloutLease{} : it->second.lease;
}

bool RolloutBoard::listed() const {
  MutexLock lock(&mu_);
  return listed_;
}

}  // namespace nodehook
