#include "agent/outputs/condition_pacing.h"

namespace nodehook {

void ConditionPacing::Found(const std::string& type, TimePoint now) {
  inherited_.insert(type);
  started_ = now;
}

ConditionPacing::Verdict ConditionPacing::Due(const std::string& type, const std::optional<NodeConditionValue>& held,
                                              const std::optional<TimePoint>& written_at,
                                              const NodeConditionValue& value, TimePoint now) {
  const bool inherited = inherited_.count(type) > 0;
  if (held && *held == value) {
    unknown_since_.erase(type);
    if (!inherited) return Verdict::kWait;
    inherited_.erase(type);
    return Verdict::kKept;
  }
  if (value.status == "Unknown" && held && held->status != "Unknown") {
    const TimePoint since = unknown_since_.emplace(type, now).first->second;
    // Catching up after a restart: keep the verdict found on the Node a while rather than write
    // Unknown, which the next rounds would most likely turn back.
    if (inherited && now - started_ < options_.hold_unknown) return Verdict::kWait;
    // A verdict turns Unknown only once the work lasted: a change handled at once writes nothing.
    if (now - since < options_.unknown_after) return Verdict::kWait;
  }
  unknown_since_.erase(type);
  const bool message_only = held && held->status == value.status && held->reason == value.reason;
  if (message_only && written_at && now - *written_at < options_.message_every) {
    return Verdict::kWait;  // derived again next round: written once the interval is over, if still so
  }
  inherited_.erase(type);
  return Verdict::kWrite;
}

}  // namespace nodehook
