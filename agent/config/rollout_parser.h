// Reads a resource's "rollout" block (RolloutPolicy in config.h; docs/configuration.md).
// Internal to agent/config. Stateless; not synchronized.
#pragma once

#include <rapidjson/document.h>

#include <string>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

// Limits of the rollout keys; shared with the JSON Schema (config_schema.cc).
inline constexpr int kMaxRolloutNodes = 100'000;
inline constexpr int kMaxSoakSeconds = 7 * 24 * 3600;
inline constexpr int kMinWindowSeconds = 10;  // short windows are for tests and drills
inline constexpr int kMaxWindowSeconds = 7 * 24 * 3600;
inline constexpr int kMinSlotLeaseSeconds = 3;
inline constexpr int kMaxSlotLeaseSeconds = 3600;
inline constexpr double kMinGrantsPerSecond = 0.1;
inline constexpr double kMaxGrantsPerSecond = 10000;
// "10%": 1 to 100 followed by a percent sign.
inline constexpr const char* kNodePercentPattern = "^([1-9][0-9]?|100)%$";

// The keys of "rollout", of each window, and the reasons a rollout may gate.
const std::vector<std::string>& RolloutKeys();
const std::vector<std::string>& RolloutWindowKeys();
const std::vector<std::string>& RolloutReasons();

// Reads `value` (the "rollout" member at `path`) into `resource->rollout`, checking it against
// what the resource already holds: its hooks (each gated reason needs one) and "singleton"
// (which takes no rollout). Time zones are looked up in `zoneinfo_dir`. Reports every problem.
void ReadRollout(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                 WatchedResource* resource, Diagnostics& diag);

}  // namespace nodehook
