#include "agent/finalizers/agent_pod_roster.h"

#include <rapidjson/document.h>

#include <utility>

#include "agent/base/log.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {

std::string PodNodeName(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return "";
  auto spec = doc.FindMember("spec");
  if (spec == doc.MemberEnd() || !spec->value.IsObject()) return "";
  auto node = spec->value.FindMember("nodeName");
  if (node == spec->value.MemberEnd() || !node->value.IsString()) return "";
  return std::string(node->value.GetString(), node->value.GetStringLength());
}

AgentPodRoster::AgentPodRoster(const Clock& clock, Duration release_after)
    : clock_(clock), release_after_(release_after) {}

void AgentPodRoster::SetOnDue(std::function<void(const std::string&)> on_due) {
  MutexLock lock(&mu_);
  on_due_ = std::move(on_due);
}

std::optional<TimePoint> AgentPodRoster::AbsentSince(const std::string& finalizer) {
  MutexLock lock(&mu_);
  if (!listed_) return std::nullopt;
  auto bound = bound_.find(finalizer);
  if (bound != bound_.end() && bound->second > 0) return std::nullopt;
  // Never seen with a pod since the first list: absent since then, as far as anyone here knows.
  auto [it, added] = absent_.emplace(finalizer, Absence{first_listed_});
  return it->second.since;
}

std::vector<std::string> AgentPodRoster::NamesFor(const std::string& finalizer) const {
  MutexLock lock(&mu_);
  auto it = names_.find(finalizer);
  if (it == names_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

void AgentPodRoster::FireDue(TimePoint now) {
  std::vector<std::pair<std::string, TimePoint>> due;  // finalizer, absent since
  std::function<void(const std::string&)> on_due;
  {
    MutexLock lock(&mu_);
    for (auto& [finalizer, absence] : absent_) {
      if (absence.fired || now - absence.since < release_after_) continue;
      absence.fired = true;
      due.emplace_back(finalizer, absence.since);
    }
    on_due = on_due_;
  }
  for (const auto& [f, since] : due) {
    Log(LogLevel::kInfo, "agent left a node",
        {{"finalizer", f},
         {"absent_seconds", std::chrono::duration_cast<std::chrono::seconds>(now - since).count()},
         {"next", "look again at objects being deleted that carry its finalizer"}});
    if (on_due) on_due(f);
  }
}

void AgentPodRoster::Bind(const std::string& uid, const std::string& node) {
  if (node.empty()) {
    pods_.erase(uid);
  } else {
    pods_[uid] = node;
  }
}

void AgentPodRoster::Recount() {
  std::map<std::string, int> bound;
  for (const auto& [uid, node] : pods_) {
    std::string f = FinalizerName(node);
    ++bound[f];
    names_[f].insert(node);
  }
  TimePoint now = clock_.Now();
  // Nodes that just lost their last pod start their wait now; nodes with a pod stop waiting.
  for (const auto& [f, count] : bound_) {
    if (count > 0 && !bound.count(f)) absent_.emplace(f, Absence{now});
  }
  for (const auto& [f, count] : bound) absent_.erase(f);
  bound_ = std::move(bound);
}

void AgentPodRoster::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) {
  MutexLock lock(&mu_);
  std::map<std::string, std::string> previous = std::move(pods_);
  pods_.clear();
  for (const ObjectPtr& item : items) {
    if (item) Bind(item->meta.uid, PodNodeName(item->json));
  }
  // A pod that cannot be read keeps the node it was last seen on.
  for (const BadObject& bad : quarantined) {
    auto it = previous.find(bad.meta.uid);
    if (it != previous.end()) pods_[it->first] = it->second;
  }
  if (!listed_) first_listed_ = clock_.Now();
  listed_ = true;
  Recount();
}

void AgentPodRoster::OnObject(ObjectPtr object) {
  if (!object) return;
  MutexLock lock(&mu_);
  Bind(object->meta.uid, PodNodeName(object->json));
  Recount();
}

void AgentPodRoster::OnDeleted(ObjectPtr last_state) {
  if (!last_state) return;
  MutexLock lock(&mu_);
  Bind(last_state->meta.uid, "");
  Recount();
}

void AgentPodRoster::OnQuarantined(const BadObject& bad, WatchEventType type) {
  if (type != WatchEventType::kDeleted || bad.meta.uid.empty()) return;  // otherwise: keep what was known
  MutexLock lock(&mu_);
  Bind(bad.meta.uid, "");
  Recount();
}

}  // namespace nodehook
