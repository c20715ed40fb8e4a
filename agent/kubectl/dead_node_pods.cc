#include "agent/kubectl/dead_node_pods.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"
#include "agent/base/utc_time.h"
#include "agent/finalizers/node_roster.h"

namespace nodehook {

std::optional<int64_t> PodDeletionMs(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  const rapidjson::Value* meta = MemberOf(doc, "metadata");
  const std::string deletion = meta ? StringMember(*meta, "deletionTimestamp") : "";
  if (deletion.empty()) return std::nullopt;
  Result<TimePoint> at = ParseRfc3339(deletion);
  if (!at.ok()) return std::nullopt;
  return ToMillis(*at);
}

bool PastGraceAndMargin(int64_t deletion_ms, int64_t now_ms) {
  return now_ms - deletion_ms > kDeadNodeMargin.count();
}

std::string WhyNotWaitedFor(const std::optional<std::string>& node_json, int64_t deletion_ms, int64_t now_ms) {
  if (!PastGraceAndMargin(deletion_ms, now_ms)) return "";
  std::string node;
  if (!node_json) {
    node = "its Node is gone";
  } else if (NodeNotReady(*node_json)) {
    node = "its Node is not Ready";
  } else {
    return "";
  }
  return node + " and its grace period ended " + std::to_string((now_ms - deletion_ms) / 1000) +
         " s ago: no kubelet will confirm it gone, so its agent is taken as stopped (docs/install.md#uninstall)";
}

}  // namespace nodehook
