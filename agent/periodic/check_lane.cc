#include "agent/periodic/check_lane.h"

#include "agent/base/log.h"

namespace nodehook {

CheckLane::CheckLane(const std::vector<WatchedResource>& resources, std::vector<ObjectCache*> caches,
                     WorkQueue& main_queue, CheckRunner& runner, ScheduleStore& schedule, Clock& clock,
                     int max_concurrent)
    : resources_(resources),
      caches_(std::move(caches)),
      main_(main_queue),
      runner_(runner),
      schedule_(schedule),
      clock_(clock),
      max_concurrent_(max_concurrent),
      due_(clock) {
  for (const auto& r : resources_) enabled_ = enabled_ || r.hooks.count(kReasonCheck) > 0;
}

std::map<std::string, int64_t>& CheckLane::StoredLocked(size_t index) {
  auto it = stored_.find(index);
  if (it != stored_.end()) return it->second;
  auto loaded = schedule_.CheckSchedule(resources_[index].ref.Id());
  if (!loaded.ok()) {
    Log(LogLevel::kWarn, "check schedule not read",
        {{"resource", resources_[index].ref.Id()}, {"handler", kReasonCheck}, {"error", loaded.status().ToString()},
         {"next", "plan each object's first check afresh"}});
  }
  return stored_[index] = loaded.ok() ? std::move(loaded).value() : std::map<std::string, int64_t>();
}

void CheckLane::Track(size_t index, const std::string& uid) {
  if (index >= resources_.size() || !resources_[index].hooks.count(kReasonCheck)) return;
  auto entry = caches_[index]->Get(uid);
  if (!entry || entry->gone || !entry->object) return;  // a deletion: nothing left to check
  QueueKey key{index, uid};
  std::optional<int64_t> stored;
  {
    MutexLock lock(&mu_);
    if (!tracked_.insert(key).second) return;
    auto& known = StoredLocked(index);
    auto it = known.find(uid);
    if (it != known.end()) {
      stored = it->second;
      known.erase(it);
    }
  }
  TimePoint due = runner_.Schedule(resources_[index], uid, stored);
  due_.AddAfter(key, due - clock_.Now());
}

void CheckLane::RunSoon(size_t index, const std::string& uid) {
  QueueKey key{index, uid};
  {
    MutexLock lock(&mu_);
    if (!tracked_.count(key)) return;
  }
  due_.AddNow(key);
}

void CheckLane::ThreadLoop(const CancelToken& hooks) {
  while (auto key = due_.Get()) {
    const size_t index = key->resource;
    const std::string& uid = key->uid;
    if (index >= resources_.size()) {
      due_.Done(*key);
      continue;
    }
    if (!main_.TryClaim(*key)) {
      due_.AddAfter(*key, kCheckBusyRetry);
      due_.Done(*key);
      continue;
    }
    auto next = runner_.Run(resources_[index], *caches_[index], uid, hooks);
    main_.Done(*key);
    if (next && !hooks.cancelled()) {
      due_.AddAfter(*key, *next);
    } else if (!next) {
      MutexLock lock(&mu_);
      tracked_.erase(*key);  // a later reconcile (the object back on this node) tracks it again
    }
    due_.Done(*key);
  }
}

}  // namespace nodehook
