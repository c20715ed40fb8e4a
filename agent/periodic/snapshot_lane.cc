#include "agent/periodic/snapshot_lane.h"

#include <algorithm>

namespace nodehook {

SnapshotLane::SnapshotLane(const std::vector<WatchedResource>& resources, std::vector<const ObjectCache*> caches,
                           SnapshotRunner& runner, Clock& clock, SnapshotLaneOptions options)
    : resources_(resources),
      caches_(std::move(caches)),
      runner_(runner),
      clock_(clock),
      options_(options),
      pending_(resources.size()) {
  for (size_t i = 0; i < resources_.size(); ++i) {
    pending_[i].wanted = resources_[i].hooks.count(kReasonSnapshot) > 0;
    enabled_ = enabled_ || pending_[i].wanted;
  }
}

void SnapshotLane::Changed(size_t index) {
  MutexLock lock(&mu_);
  if (index >= pending_.size() || !pending_[index].wanted) return;
  Pending& p = pending_[index];
  TimePoint now = clock_.Now();
  p.listed = true;
  if (!p.first_change) p.first_change = now;
  TimePoint due = now + options_.window;
  if (options_.max_latency > Duration::zero()) due = std::min(due, *p.first_change + options_.max_latency);
  p.change_due = due;
  cv_.notify_all();
}

std::optional<TimePoint> SnapshotLane::DueLocked(const Pending& p) const {
  if (!p.wanted || !p.listed) return std::nullopt;
  if (p.change_due && p.retry_due) return std::min(*p.change_due, *p.retry_due);
  return p.change_due ? p.change_due : p.retry_due;
}

std::optional<std::pair<size_t, TimePoint>> SnapshotLane::NextLocked() const {
  std::optional<std::pair<size_t, TimePoint>> next;
  for (size_t i = 0; i < pending_.size(); ++i) {
    auto due = DueLocked(pending_[i]);
    if (due && (!next || *due < next->second)) next = std::make_pair(i, *due);
  }
  return next;
}

void SnapshotLane::ThreadLoop(const CancelToken& hooks) {
  MutexLock lock(&mu_);
  while (!shut_down_) {
    if (RunDueLocked(hooks)) continue;
    auto next = NextLocked();
    TimePoint deadline = next ? next->second : TimePoint::max();
    WaitUntil(clock_, cv_, mu_, deadline, [&] {
      mu_.AssertHeld();
      auto now_next = NextLocked();
      return shut_down_ || (now_next && (!next || now_next->second < deadline));
    });
  }
}

std::optional<TimePoint> SnapshotLane::NextDue() const {
  MutexLock lock(&mu_);
  auto next = NextLocked();
  return next ? std::optional<TimePoint>(next->second) : std::nullopt;
}

bool SnapshotLane::RunDue(const CancelToken& hooks) {
  MutexLock lock(&mu_);
  return RunDueLocked(hooks);
}

bool SnapshotLane::RunDueLocked(const CancelToken& hooks) {
  auto next = NextLocked();
  if (!next || next->second > clock_.Now()) return false;
  size_t index = next->first;
  Pending& p = pending_[index];
  // Changes from here on belong to the next run.
  p.first_change.reset();
  p.change_due.reset();
  p.retry_due.reset();
  bool first = !p.ran_once;
  p.ran_once = true;
  std::optional<Duration> again;
  {
    MutexUnlock unlock(&mu_);
    again = runner_.Run(resources_[index], *caches_[index], first, hooks);
  }
  if (again && !hooks.cancelled()) pending_[index].retry_due = clock_.Now() + *again;
  return true;
}

void SnapshotLane::ShutDown() {
  MutexLock lock(&mu_);
  shut_down_ = true;
  cv_.notify_all();
}

}  // namespace nodehook
