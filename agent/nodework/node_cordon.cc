#include "agent/nodework/node_cordon.h"

#include <cstdint>
#include <cstdio>

namespace nodehook {
namespace {

// A conflict means the Node changed between the read and the write (a kubelet's status update
// does that every few seconds): read it again and decide again.
constexpr int kTries = 3;

}  // namespace

std::string CordonMarkKey(const std::string& rid, const std::string& uid) {
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : uid) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(kCordonMarkPrefix) + rid + "." + std::string(hex, 12);
}

Result<CordonTaken> TakeCordon(NodeApi& api, const std::string& key, const std::string& value) {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < kTries; ++attempt) {
    Result<NodeState> node = api.GetNode();
    if (!node.ok()) return node.status();
    const bool ours = node->marks.count(key) > 0;
    if (node->unschedulable && !ours && node->marks.empty()) return CordonTaken{false, true};
    if (node->unschedulable && ours && node->marks.at(key) == value) return CordonTaken{true, false};
    CordonTaken taken{true, false, {}, node->Meta()};
    if (!node->unschedulable) {
      for (const auto& [mark, unused] : node->marks) {
        if (mark != key) taken.stale_marks.push_back(mark);
      }
    }
    last = api.Cordon(*node, key, value, taken.stale_marks);
    if (last.ok()) return taken;
    if (last.code() != StatusCode::kConflict) return last;
  }
  return last;
}

const char* CordonGivenName(CordonGiven given) {
  switch (given) {
    case CordonGiven::kUncordoned: return "uncordoned";
    case CordonGiven::kOthersHold: return "kept_for_another_rollout";
    case CordonGiven::kUncordonedBefore: return "uncordoned_by_someone";
    case CordonGiven::kNotOurs: return "not_ours";
  }
  return "not_ours";
}

Result<CordonGiven> GiveCordonBack(NodeApi& api, const std::string& key) {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < kTries; ++attempt) {
    Result<NodeState> node = api.GetNode();
    if (!node.ok()) return node.status();
    if (node->marks.count(key) == 0) return CordonGiven::kNotOurs;
    CordonGiven given = !node->unschedulable    ? CordonGiven::kUncordonedBefore
                        : node->marks.size() > 1 ? CordonGiven::kOthersHold
                                                 : CordonGiven::kUncordoned;
    last = api.Unmark(*node, key, given == CordonGiven::kUncordoned);
    if (last.ok()) return given;
    if (last.code() != StatusCode::kConflict) return last;
  }
  return last;
}

Status MarkCordonFailed(NodeApi& api, const std::string& key, const std::string& value) {
  Status last = Status::Ok();
  for (int attempt = 0; attempt < kTries; ++attempt) {
    Result<NodeState> node = api.GetNode();
    if (!node.ok()) return node.status();
    auto mark = node->marks.find(key);
    if (!node->unschedulable || mark == node->marks.end() || mark->second == value) return Status::Ok();
    last = api.Cordon(*node, key, value, {});
    if (last.ok() || last.code() != StatusCode::kConflict) return last;
  }
  return last;
}

Result<bool> CordonHeld(NodeApi& api, const std::string& key) {
  Result<NodeState> node = api.GetNode();
  if (!node.ok()) return node.status();
  return node->unschedulable && node->marks.count(key) > 0;
}

}  // namespace nodehook
