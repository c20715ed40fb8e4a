// ConditionPacing: when a derived NodeCondition ("node_outputs": {"condition"}) is worth a write.
//   - Only when its status, reason or message changes: no heartbeat.
//   - A change of the message alone (a failing hook's message often names its retry) at most
//     once per `message_every`, so a failure costs a bounded number of writes however often it
//     retries.
//   - A change handled quickly costs nothing: a True or False verdict turns Unknown only once
//     "in progress" lasted `unknown_after`.
//   - After a restart the agent catches up first (lists, then looks at every object again): a
//     condition found on the Node keeps its verdict through that, instead of turning Unknown and
//     back, until a verdict (True or False) is derived or `hold_unknown` has passed; the first
//     time the Node is found as derived, Due says so (the writer logs "node condition kept").
// Not thread-safe: the writer's thread only.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/outputs/node_condition.h"

namespace nodehook {

struct PacingOptions {
  Duration hold_unknown = std::chrono::seconds(60);
  Duration unknown_after = std::chrono::seconds(10);
  Duration message_every = std::chrono::seconds(60);
};

class ConditionPacing {
 public:
  explicit ConditionPacing(PacingOptions options) : options_(options) {}

  // The Node was read at `now`: `type` was found there (its verdict is held while catching up).
  void Found(const std::string& type, TimePoint now);
  void Started(TimePoint now) { started_ = now; }

  enum class Verdict {
    kWrite,   // write `value` now
    kWait,    // not now (unchanged, or held back by the rules above)
    kKept,    // unchanged, and found so on the Node at start: the first time only
  };
  // Whether `value` is to be written now. `held`: what the Node holds as far as known;
  // `written_at`: when this run last wrote it (unset: found on the Node, or never written).
  Verdict Due(const std::string& type, const std::optional<NodeConditionValue>& held,
              const std::optional<TimePoint>& written_at, const NodeConditionValue& value, TimePoint now);

 private:
  const PacingOptions options_;
  TimePoint started_{};
  std::set<std::string> inherited_;                 // found on the Node at start, not derived yet this run
  std::map<std::string, TimePoint> unknown_since_;  // derived Unknown since, while the Node says otherwise
};

}  // namespace nodehook
