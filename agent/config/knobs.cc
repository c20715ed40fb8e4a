#include "agent/config/knobs.h"

#include <charconv>

#include "agent/base/host_port.h"

namespace nodehook {
namespace {

std::string Expectation(const KnobBinding& knob) {
  switch (knob.type) {
    case KnobType::kInteger: return IntegerExpectation(knob.min_value, knob.max_value);
    case KnobType::kBool: return "expected true or false";
    case KnobType::kText: break;
  }
  if (!knob.allowed.empty()) return "expected one of: " + JoinNames(knob.allowed);
  return knob.non_empty ? "expected a non-empty string" : "expected a string";
}

// The Store functions return "" when stored, otherwise what was expected and what was given.
// Every range check happens here, whichever source the value came from.
std::string StoreInt(const KnobBinding& knob, int64_t value, Config* config) {
  if (value < knob.min_value || value > knob.max_value) return Expectation(knob) + ", got " + std::to_string(value);
  *knob.integer(*config) = static_cast<int>(value);
  return "";
}

std::string StoreText(const KnobBinding& knob, const std::string& value, Config* config) {
  std::string refused = Expectation(knob) + ", got \"" + value + "\"";
  if (knob.type == KnobType::kInteger) {
    int64_t parsed = 0;
    const char* end = value.data() + value.size();
    auto [stop, ec] = std::from_chars(value.data(), end, parsed);
    if (ec == std::errc::result_out_of_range) return Expectation(knob) + ", got " + value;
    if (value.empty() || ec != std::errc() || stop != end) return refused;
    return StoreInt(knob, parsed, config);
  }
  if (knob.type == KnobType::kBool) {
    if (value != "true" && value != "false") return refused;
    *knob.boolean(*config) = value == "true";
    return "";
  }
  bool allowed = knob.allowed.empty();
  for (const std::string& a : knob.allowed) allowed = allowed || a == value;
  if (!allowed || (knob.non_empty && value.empty())) return refused;
  *knob.text(*config) = value;
  return "";
}

// A file value of the knob's JSON type, stored; or what was wrong with it.
std::string StoreJson(const KnobBinding& knob, const rapidjson::Value& value, Config* config) {
  switch (knob.type) {
    case KnobType::kInteger:
      if (value.IsInt64()) return StoreInt(knob, value.GetInt64(), config);
      return Expectation(knob) + ", got " + DescribeNonInt(value);
    case KnobType::kBool:
      if (!value.IsBool()) return Expectation(knob) + ", got " + JsonTypeName(value);
      *knob.boolean(*config) = value.GetBool();
      return "";
    case KnobType::kText:
      if (!value.IsString()) return Expectation(knob) + ", got " + JsonTypeName(value);
      return StoreText(knob, value.GetString(), config);
  }
  return "unknown knob type";
}

void Record(const KnobBinding& knob, const std::string& problem, const KnobOrigin& origin, KnobOrigins* origins,
            Diagnostics& diag) {
  if (problem.empty()) {
    (*origins)[knob.info.name] = origin;
  } else {
    diag.ErrorAtLine(origin.path, origin.line, problem);
  }
}

}  // namespace

const std::vector<KnobInfo>& Knobs() {
  static const std::vector<KnobInfo> infos = [] {
    std::vector<KnobInfo> out;
    for (const KnobBinding& k : KnobBindings()) out.push_back(k.info);
    return out;
  }();
  return infos;
}

std::vector<std::string> KnobKeysUnder(const std::string& path) {
  std::vector<std::string> keys;
  for (const KnobBinding& k : KnobBindings()) {
    if (ParentPath(k.info.file_key) == path) keys.push_back(k.info.file_key.substr(path.empty() ? 0 : path.size() + 1));
  }
  return keys;
}

void ReadFileKnobs(const rapidjson::Value& object, const std::string& path, Config* config,
                   KnobOrigins* origins, Diagnostics& diag) {
  for (const KnobBinding& knob : KnobBindings()) {
    if (ParentPath(knob.info.file_key) != path) continue;
    std::string key = knob.info.file_key.substr(path.empty() ? 0 : path.size() + 1);
    const rapidjson::Value* value = FindMember(object, key.c_str());
    if (value == nullptr) continue;
    KnobOrigin origin{knob.info.file_key, diag.LineOf(knob.info.file_key)};
    Record(knob, StoreJson(knob, *value, config), origin, origins, diag);
  }
}

void ApplyKnobOverrides(const ConfigSources& sources, Config* config, KnobOrigins* origins, Diagnostics& diag) {
  for (const KnobBinding& knob : KnobBindings()) {
    auto env = sources.env.find(knob.info.env);
    if (env != sources.env.end() && !env->second.empty()) {
      Record(knob, StoreText(knob, env->second, config), {"env " + knob.info.env, 0}, origins, diag);
    }
  }
  for (const auto& [name, value] : sources.flags) {
    const KnobBinding* knob = nullptr;
    for (const KnobBinding& k : KnobBindings()) knob = k.info.name == name ? &k : knob;
    if (knob == nullptr) {
      diag.ErrorAtLine("flag " + KnobFlagName(name), 0, "unknown knob");
      continue;
    }
    Record(*knob, StoreText(*knob, value, config), {"flag " + knob->info.flag, 0}, origins, diag);
  }
}

namespace {

KnobOrigin OriginOf(const KnobOrigins& origins, const std::string& name) {
  auto found = origins.find(name);
  return found != origins.end() ? found->second : KnobOrigin{"tuning." + name, 0};
}

// The admin endpoint changes what hooks do: only loopback may reach it without a token.
void CheckListenKnobs(const Tuning& tuning, const KnobOrigins& origins, Diagnostics& diag) {
  struct Listener {
    const char* name;
    const std::string& address;
    bool needs_loopback;
  };
  for (const Listener& l : {Listener{"health_address", tuning.health_address, false},
                            Listener{"admin_address", tuning.admin_address, tuning.admin_token_file.empty()}}) {
    if (l.address.empty()) continue;
    auto where = ParseHostPort(l.name, l.address);
    KnobOrigin at = OriginOf(origins, l.name);
    if (!where.ok()) {
      diag.ErrorAtLine(at.path, at.line, where.status().message());
    } else if (l.needs_loopback && !IsLoopbackHost(where->host)) {
      diag.ErrorAtLine(at.path, at.line,
                       "\"" + l.address + "\" is not a loopback address, so POST /v1/retry would be open to the "
                       "network; expected 127.0.0.1, [::1] or localhost, or set admin_token_file");
    }
  }
}

// A leader stops its hooks at the renew deadline and kills them 2 s later; that must be over
// before the Lease can expire for the others (client-go also wants renew deadline > 1.2 x retry).
void CheckLeaseKnobs(const Tuning& tuning, const KnobOrigins& origins, Diagnostics& diag) {
  constexpr int kKillDelayAndMargin = 3;
  KnobOrigin at = OriginOf(origins, "lease_renew_deadline_seconds");
  if (tuning.lease_renew_deadline_seconds + kKillDelayAndMargin > tuning.lease_duration_seconds) {
    diag.ErrorAtLine(at.path, at.line,
                     "lease_renew_deadline_seconds (" + std::to_string(tuning.lease_renew_deadline_seconds) +
                         ") must be at least 3 below lease_duration_seconds (" +
                         std::to_string(tuning.lease_duration_seconds) +
                         "), so a leader's hooks are killed before another agent can take over");
  }
  if (tuning.lease_renew_deadline_seconds * 10 <= tuning.lease_retry_period_seconds * 12) {
    diag.ErrorAtLine(at.path, at.line,
                     "lease_renew_deadline_seconds (" + std::to_string(tuning.lease_renew_deadline_seconds) +
                         ") must be more than 1.2 x lease_retry_period_seconds (" +
                         std::to_string(tuning.lease_retry_period_seconds) + ")");
  }
}

}  // namespace

void CheckMergedKnobs(Config* config, const KnobOrigins& origins, Diagnostics& diag) {
  for (const KnobBinding& knob : KnobBindings()) {
    if (!knob.required || !knob.text(*config)->empty()) continue;
    diag.ErrorAtLine(knob.info.name, 0,
                     "not set (expected \"" + knob.info.file_key + "\" in the file, " + knob.info.flag + ", or " +
                         knob.info.env + knob.env_note + ")");
  }
  const Tuning& tuning = config->tuning;
  CheckListenKnobs(tuning, origins, diag);
  bool singleton = false;
  for (const WatchedResource& r : config->resources) singleton = singleton || r.singleton;
  if (singleton) CheckLeaseKnobs(tuning, origins, diag);  // the Lease knobs matter only then
  if (tuning.retry_base_seconds > tuning.retry_max_seconds) {
    auto max_origin = origins.find("retry_max_seconds");
    auto base_origin = origins.find("retry_base_seconds");
    KnobOrigin at = max_origin != origins.end() ? max_origin->second
                    : base_origin != origins.end() ? base_origin->second
                                                   : KnobOrigin{"tuning.retry_max_seconds", 0};
    diag.ErrorAtLine(at.path, at.line,
                     "retry_max_seconds (" + std::to_string(tuning.retry_max_seconds) + ") must be >= retry_base_seconds (" +
                         std::to_string(tuning.retry_base_seconds) + ")");
  }
}

}  // namespace nodehook
