// Reads one entry of "resources" (and its hooks) from the config document.
// Internal to agent/config. Stateless; not synchronized.
#pragma once

#include <rapidjson/document.h>

#include <string>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

// Fills `out` with what is valid and reports everything that is not.
void ReadWatchedResource(const rapidjson::Value& value, const std::string& path, WatchedResource* out,
                         Diagnostics& diag);

}  // namespace nodehook
