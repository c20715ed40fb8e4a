#include "agent/finalizers/node_roster.h"

#include <algorithm>
#include <set>
#include <utility>

#include <rapidjson/document.h>

#include "agent/base/log.h"
#include "agent/finalizers/finalizers.h"

namespace nodehook {
namespace {

// Departed names are only needed to trace hashed finalizers back; a few hundred cover any
// plausible wave of nodes leaving at once.
constexpr size_t kMaxDepartedNames = 512;

}  // namespace

bool NodeNotReady(const std::string& node_json) {
  rapidjson::Document doc;
  doc.Parse(node_json.c_str(), node_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return false;
  auto conditions = status->value.FindMember("conditions");
  if (conditions == status->value.MemberEnd() || !conditions->value.IsArray()) return false;
  for (const auto& c : conditions->value.GetArray()) {
    if (!c.IsObject()) continue;
    auto type = c.FindMember("type"), value = c.FindMember("status");
    if (type == c.MemberEnd() || !type->value.IsString() || std::string(type->value.GetString()) != "Ready") continue;
    return value == c.MemberEnd() || !value->value.IsString() || std::string(value->value.GetString()) != "True";
  }
  return false;
}

void NodeRoster::SetOnDeparted(std::function<void(const std::string&)> on_departed) {
  MutexLock lock(&mu_);
  on_departed_ = std::move(on_departed);
}

bool NodeRoster::Present(const std::string& node_name) const {
  MutexLock lock(&mu_);
  return present_.count(node_name) > 0;
}

bool NodeRoster::ShowsOwnerOf(const std::string& finalizer) const {
  MutexLock lock(&mu_);
  return by_finalizer_.count(finalizer) > 0;
}

std::vector<std::string> NodeRoster::NamesFor(const std::string& finalizer) const {
  std::vector<std::string> names;
  MutexLock lock(&mu_);
  auto present = by_finalizer_.find(finalizer);
  if (present != by_finalizer_.end()) names.push_back(present->second);
  for (const auto& n : departed_) {
    if (FinalizerName(n) == finalizer && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

std::optional<TimePoint> NodeRoster::NotReadySince(const std::string& finalizer) const {
  MutexLock lock(&mu_);
  auto present = by_finalizer_.find(finalizer);
  if (present == by_finalizer_.end()) return std::nullopt;
  auto unready = not_ready_.find(present->second);
  if (unready == not_ready_.end()) return std::nullopt;
  return unready->second.since;
}

void NodeRoster::FireDue(TimePoint now, Duration after) {
  std::vector<std::string> due;
  std::function<void(const std::string&)> on_departed;
  {
    MutexLock lock(&mu_);
    for (auto& [name, unready] : not_ready_) {
      if (unready.fired || now - unready.since < after) continue;
      unready.fired = true;
      due.push_back(name);
    }
    on_departed = on_departed_;
  }
  for (const auto& n : due) {
    Log(LogLevel::kInfo, "node not ready for long",
        {{"node", n}, {"finalizer", FinalizerName(n)},
         {"not_ready_seconds", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(after).count())},
         {"next", "look again at objects being deleted that carry its finalizer"}});
    if (on_departed) on_departed(n);
  }
}

void NodeRoster::NoteReadiness(const std::string& name, bool not_ready) {
  if (!clock_) return;
  if (!not_ready) {
    not_ready_.erase(name);
  } else if (not_ready_.count(name) == 0) {
    not_ready_[name] = Unready{clock_->Now(), false};
  }
}

void NodeRoster::Insert(const std::string& name) {
  if (present_.count(name)) return;
  std::string finalizer = FinalizerName(name);
  present_.emplace(name, finalizer);
  by_finalizer_[finalizer] = name;
}

void NodeRoster::OnListed(const std::vector<ObjectPtr>& items, const std::vector<BadObject>& quarantined) {
  std::set<std::string> now;
  std::map<std::string, bool> readiness;
  for (const ObjectPtr& item : items) {
    if (!item) continue;
    now.insert(item->meta.name);
    readiness[item->meta.name] = NodeNotReady(item->json);
  }
  for (const BadObject& bad : quarantined) {
    if (!bad.meta.name.empty()) now.insert(bad.meta.name);
  }
  std::vector<std::string> gone;
  {
    MutexLock lock(&mu_);
    for (const auto& [name, finalizer] : present_) {
      if (now.count(name)) continue;
      gone.push_back(name);
      RememberDeparted(name);
    }
    present_.clear();
    by_finalizer_.clear();
    for (const auto& n : now) Insert(n);
    for (auto it = not_ready_.begin(); it != not_ready_.end();) {
      it = now.count(it->first) ? std::next(it) : not_ready_.erase(it);
    }
    // A quarantined Node keeps what was known of it.
    for (const auto& [name, not_ready] : readiness) NoteReadiness(name, not_ready);
  }
  Departed(gone);
}

void NodeRoster::OnObject(ObjectPtr object) {
  if (!object) return;
  MutexLock lock(&mu_);
  Insert(object->meta.name);
  NoteReadiness(object->meta.name, NodeNotReady(object->json));
}

void NodeRoster::OnDeleted(ObjectPtr last_state) {
  if (last_state) Remove(last_state->meta.name);
}

void NodeRoster::OnQuarantined(const BadObject& bad, WatchEventType type) {
  if (bad.meta.name.empty()) return;
  if (type == WatchEventType::kDeleted) return Remove(bad.meta.name);
  MutexLock lock(&mu_);
  Insert(bad.meta.name);
}

void NodeRoster::Remove(const std::string& name) {
  {
    MutexLock lock(&mu_);
    auto it = present_.find(name);
    if (it == present_.end()) return;
    by_finalizer_.erase(it->second);
    present_.erase(it);
    not_ready_.erase(name);
    RememberDeparted(name);
  }
  Departed({name});
}

void NodeRoster::RememberDeparted(const std::string& name) {
  departed_.erase(std::remove(departed_.begin(), departed_.end(), name), departed_.end());
  departed_.push_back(name);
  if (departed_.size() > kMaxDepartedNames) departed_.pop_front();
}

void NodeRoster::Departed(const std::vector<std::string>& names) {
  std::function<void(const std::string&)> on_departed;
  {
    MutexLock lock(&mu_);
    on_departed = on_departed_;
  }
  for (const auto& n : names) {
    Log(LogLevel::kInfo, "node left the cluster",
        {{"node", n}, {"finalizer", FinalizerName(n)},
         {"next", "look again at objects being deleted that carry its finalizer"}});
    if (on_departed) on_departed(n);
  }
}

}  // namespace nodehook
