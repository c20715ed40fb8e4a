#include "agent/pipeline/requeue_triggers.h"

#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

bool HasTargeting(const WatchedResource& r) { return !r.node_selector_path.empty(); }
bool IsSingleton(const WatchedResource& r) { return r.singleton; }

}  // namespace

RequeueTriggers::RequeueTriggers(WorkQueue& queue, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
                                 std::function<void(size_t index)> changed)
    : queue_(queue), pipelines_(pipelines), changed_(std::move(changed)) {}

void RequeueTriggers::RegisterOn(ModeSet& modes) {
  modes.OnNodeLabelsChanged([this] { RequeueWhole(HasTargeting); });
  modes.OnNodeDeparted([this](const std::string& finalizer) {
    for (const QueueKey& key : DeletingWith(finalizer)) queue_.AddNow(key);
  });
  modes.OnLeadershipChanged([this](bool leading) {
    if (leading) RequeueWhole(IsSingleton);
  });
  modes.OnRolloutGranted([this](const WatchedResource& resource, const std::string& uid) {
    for (const auto& p : pipelines_) {
      if (p->config.ref.Id() == resource.ref.Id() && p->config.ref.namespace_name == resource.ref.namespace_name) {
        queue_.AddNow(p->Key(uid));
      }
    }
  });
}

std::vector<QueueKey> RequeueTriggers::AllOf(const std::function<bool(const WatchedResource&)>& which) const {
  std::vector<QueueKey> keys;
  for (const auto& p : pipelines_) {
    if (!which(p->config)) continue;
    for (const auto& uid : p->tracker.cache().Uids()) keys.push_back(p->Key(uid));
  }
  return keys;
}

std::vector<QueueKey> RequeueTriggers::Targeted() const { return AllOf(HasTargeting); }
std::vector<QueueKey> RequeueTriggers::Singletons() const { return AllOf(IsSingleton); }

std::vector<QueueKey> RequeueTriggers::DeletingWith(const std::string& finalizer) const {
  std::vector<QueueKey> keys;
  for (const auto& p : pipelines_) {
    if (!p->config.finalizer) continue;
    for (const auto& uid : UidsDeletingWith(p->tracker.cache(), finalizer)) keys.push_back(p->Key(uid));
  }
  return keys;
}

void RequeueTriggers::RequeueWhole(const std::function<bool(const WatchedResource&)>& which) {
  for (const QueueKey& key : AllOf(which)) queue_.Add(key);
  for (const auto& p : pipelines_) {
    if (which(p->config) && changed_) changed_(p->index);
  }
}

}  // namespace nodehook
