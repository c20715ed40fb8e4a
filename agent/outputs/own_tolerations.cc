#include "agent/outputs/own_tolerations.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "agent/base/json_text.h"

namespace nodehook {
namespace {

constexpr const char* kWayOut =
    "; tolerate it in the agents' DaemonSet (the shipped tolerations, [{operator: Exists}], tolerate every "
    "taint) or publish it as NoSchedule";

}  // namespace

bool Tolerates(const Toleration& t, const OutputTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  return (t.op.empty() || t.op == "Equal") && t.value == taint.value;
}

Result<std::vector<Toleration>> ParseTolerations(const std::string& pod_json) {
  rapidjson::Document doc;
  doc.Parse(pod_json.c_str(), pod_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("pod: not a JSON object");
  const rapidjson::Value* spec = MemberOf(doc, "spec");
  const rapidjson::Value* list = spec ? MemberOf(*spec, "tolerations") : nullptr;
  std::vector<Toleration> tolerations;
  if (!list || !list->IsArray()) return tolerations;
  for (const auto& item : list->GetArray()) {
    if (!item.IsObject()) return InvalidError("pod: spec.tolerations holds a non-object");
    Toleration t{StringMember(item, "key"), StringMember(item, "operator"), StringMember(item, "value"),
                 StringMember(item, "effect"), std::nullopt};
    const rapidjson::Value* seconds = MemberOf(item, "tolerationSeconds");
    if (seconds && seconds->IsInt64()) t.seconds = seconds->GetInt64();
    tolerations.push_back(std::move(t));
  }
  return tolerations;
}

Status CheckOwnPodTolerates(const PublishedOutputs& outputs, const OwnTolerations& own) {
  if (!outputs.taints) return Status::Ok();
  for (size_t i = 0; i < outputs.taints->size(); ++i) {
    const OutputTaint& taint = (*outputs.taints)[i];
    if (taint.effect != "NoExecute") continue;
    const std::string what = "taints[" + std::to_string(i) + "]: \"" + taint.key + "\" with effect NoExecute";
    if (!own.tolerations) {
      return InvalidError(what + " is refused: this agent's own tolerations are not known (" + own.unknown_why +
                          "), and it could evict the agent, leaving none to take it off" + kWayOut);
    }
    std::optional<int64_t> for_a_while;
    bool for_good = false;
    for (const Toleration& t : *own.tolerations) {
      if (!Tolerates(t, taint)) continue;
      if (!t.seconds) for_good = true;
      else for_a_while = for_a_while ? std::max(*for_a_while, *t.seconds) : *t.seconds;
    }
    if (for_good) continue;
    const std::string tolerated =
        for_a_while ? "tolerates it for " + std::to_string(*for_a_while) + " s only (tolerationSeconds)"
                    : "does not tolerate it";
    return InvalidError(what + " would evict this agent's own pod " + own.pod + ", which " + tolerated +
                        ", and no agent would be left on the node to take it off" + kWayOut);
  }
  return Status::Ok();
}

}  // namespace nodehook
