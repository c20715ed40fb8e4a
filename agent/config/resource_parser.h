// Reads one entry of "resources" (and its hooks) from the config document.
// Internal to agent/config. Stateless; not synchronized.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

// Per-hook limits; the same ceilings as the tuning knobs they override (knobs.cc). Shared with
// the JSON Schema (config_schema.h) so both accept the same values.
inline constexpr int kMaxHookTimeoutSeconds = 7 * 24 * 3600;
inline constexpr int kMaxHookRetries = 1'000'000;
inline constexpr int kMaxHookTotalSeconds = 365 * 24 * 3600;
inline constexpr int kMaxCheckIntervalSeconds = 365 * 24 * 3600;
inline constexpr int kMaxCheckJitterPercent = 50;

// The reasons a hook may be configured for, in the order the docs list them.
const std::vector<std::string>& HookReasons();
// The keys a resources[] entry accepts.
const std::vector<std::string>& ResourceKeys();
// The keys a hook accepts: every reason's, plus check's timing and snapshot's start behaviour.
std::vector<std::string> HookKeys(const std::string& reason);

// One hook object at `path`, with the keys HookKeys(reason) allows (argv required).
void ReadHook(const rapidjson::Value& value, const std::string& path, const std::string& reason, HookSpec* out,
              Diagnostics& diag);

// Fills `out` with what is valid and reports everything that is not. Rollout windows' time
// zones are looked up in `zoneinfo_dir`.
void ReadWatchedResource(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                         WatchedResource* out, Diagnostics& diag);

}  // namespace nodehook
