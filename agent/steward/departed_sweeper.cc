#include "agent/steward/departed_sweeper.h"

#include <algorithm>
#include <vector>

#include "agent/base/log.h"

namespace nodehook {
namespace {

constexpr const char* kNodehookPrefix = "nodehook.io/";

// Whether a deleting object carries some node's finalizer (read from its JSON: the finalizers are
// all the sweeper needs to know before a sweep).
FactsPtr NodeFinalizersOf(const KubeObject& object, const WatchedResource& resource) {
  if (!object.meta.deleting) return nullptr;
  FactsPtr facts = ReadFacts(object.json, FactsSpecOf(resource));
  if (!facts->finalizers_readable.ok()) return facts;  // swept, so the problem is logged
  bool any = std::any_of(facts->finalizers.begin(), facts->finalizers.end(), [](const std::string& f) {
    return f.rfind(kNodehookPrefix, 0) == 0 && f != kSingletonFinalizer;
  });
  return any ? facts : nullptr;
}

}  // namespace

DepartedSweeper::DepartedSweeper(const WatchedResource& resource, FinalizerSteps& finalizers, Clock& clock,
                                 Duration recheck)
    : resource_(resource), finalizers_(finalizers), clock_(clock), recheck_(recheck) {}

void DepartedSweeper::Keep(const ObjectPtr& object, TimePoint due) {
  if (FactsPtr facts = NodeFinalizersOf(*object, resource_)) {
    kept_[object->meta.uid] = Kept{object, std::move(facts), due};
  } else {
    kept_.erase(object->meta.uid);
  }
}

void DepartedSweeper::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>&) {
  MutexLock lock(&mu_);
  kept_.clear();
  for (const auto& item : items) Keep(item, clock_.Now());
  cv_.notify_all();
}

void DepartedSweeper::OnObject(ObjectPtr object) {
  MutexLock lock(&mu_);
  Keep(object, clock_.Now());
  cv_.notify_all();
}

void DepartedSweeper::OnDeleted(ObjectPtr last_state) {
  MutexLock lock(&mu_);
  kept_.erase(last_state->meta.uid);
}

void DepartedSweeper::Wake() {
  MutexLock lock(&mu_);
  woken_ = true;
  cv_.notify_all();
}

size_t DepartedSweeper::pending() const {
  MutexLock lock(&mu_);
  return kept_.size();
}

void DepartedSweeper::SweepDue() {
  std::vector<Kept> due;
  {
    MutexLock lock(&mu_);
    TimePoint now = clock_.Now();
    for (auto& [uid, kept] : kept_) {
      if (!woken_ && kept.due > now) continue;
      kept.due = now + recheck_;
      due.push_back(kept);
    }
    woken_ = false;
  }
  for (const Kept& kept : due) {
    const ObjectPtr& object = kept.object;
    Status swept = finalizers_.SweepDeparted(resource_, *object, *kept.facts);
    if (!swept.ok()) {
      Log(LogLevel::kWarn, "departed finalizers not swept",
          {{"resource", resource_.ref.Id()}, {"object", object->meta.Key()}, {"uid", object->meta.uid},
           {"error", swept.ToString()},
           {"next", "try again in " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(recheck_).count()) +
                        "s"}});
    }
  }
}

void DepartedSweeper::Run(const CancelToken& stop) {
  CancelRegistration wake(stop, [this] {
    MutexLock lock(&mu_);
    cv_.notify_all();
  });
  while (!stop.cancelled()) {
    SweepDue();
    MutexLock lock(&mu_);
    TimePoint next = clock_.Now() + recheck_;
    for (const auto& [uid, kept] : kept_) next = std::min(next, kept.due);
    WaitUntil(clock_, cv_, mu_, next, [&] {
      mu_.AssertHeld();
      if (stop.cancelled() || woken_) return true;
      TimePoint now = clock_.Now();
      return std::any_of(kept_.begin(), kept_.end(), [&](const auto& k) { return k.second.due <= now; });
    });
  }
}

}  // namespace nodehook
