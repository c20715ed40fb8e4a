// The knob table behind Knobs(): each row binds a file key, flag and environment variable to a
// field of Config, and says which values it accepts (an integer's range, a text's choices).
// File reading, overrides and validation are all driven by it, so adding a knob is one row
// (plus its field):
//   Int("tuning.name", &Tuning::name, MIN, MAX, "help"),
//   Text("tuning.name", &Tuning::name, "help"),  Bool("name", &Config::name, "help"),
// The flag is --name and the variable NODEHOOK_NAME, from the last part of the file key.
// Internal to agent/config. The table is built once and immutable; safe to read from any thread.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/config/json_fields.h"

namespace nodehook {

enum class KnobType { kText, kInteger, kBool };

struct KnobBinding {
  KnobInfo info;
  KnobType type = KnobType::kText;
  std::function<std::string*(Config&)> text;  // set for kText
  std::function<int*(Config&)> integer;       // set for kInteger
  std::function<bool*(Config&)> boolean;      // set for kBool
  int min_value = 0;                          // kInteger: the accepted range, inclusive
  int max_value = 0;
  std::vector<std::string> allowed;           // kText: the only accepted values; empty = any
  bool non_empty = false;                     // kText: "" is refused when given explicitly
  bool required = false;                      // must end up non-empty after all sources
  std::string env_note;                       // added to the "not set" hint after the env name

  KnobBinding OneOf(std::vector<std::string> values) const;
  KnobBinding NonEmpty() const;
  KnobBinding Required(std::string note = "") const;
  KnobBinding Env(std::string variable) const;  // a well-known variable (NODE_NAME, KUBECONFIG)
};

const std::vector<KnobBinding>& KnobBindings();

// A knob's flag: "allow_volatile_state" -> "--allow-volatile-state".
std::string KnobFlagName(const std::string& name);

// Where a knob's final value came from, so errors found after merging point at the right source.
struct KnobOrigin {
  std::string path;  // "tuning.workers", "env NODEHOOK_WORKERS", "flag --workers"
  int line = 0;
};
using KnobOrigins = std::map<std::string, KnobOrigin>;  // by knob name

// The keys directly under `path` that are knobs, e.g. "tuning" -> {"log_level", "workers", ...}.
std::vector<std::string> KnobKeysUnder(const std::string& path);

// Reads every knob stored directly under `path` in the file (the object at `path`).
void ReadFileKnobs(const rapidjson::Value& object, const std::string& path, Config* config,
                   KnobOrigins* origins, Diagnostics& diag);

// Applies the environment, then flags (so flags win). Empty environment values count as unset.
void ApplyKnobOverrides(const ConfigSources& sources, Config* config, KnobOrigins* origins, Diagnostics& diag);

// Checks that need the merged result: required knobs are set, retry_base <= retry_max, and
// (with a singleton resource) the lease renew deadline fits the lease duration.
// Takes a mutable Config only because the table's accessors do; nothing is changed.
void CheckMergedKnobs(Config* config, const KnobOrigins& origins, Diagnostics& diag);

}  // namespace nodehook
