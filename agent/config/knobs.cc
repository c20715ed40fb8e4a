#include "agent/config/knobs.h"

#include <cctype>
#include <charconv>

namespace nodehook {
namespace {

std::string FlagName(const std::string& name) {
  std::string flag = "--" + name;
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

std::string EnvName(const std::string& name) {
  std::string env = "NODEHOOK_" + name;
  for (char& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

// `env` may be given when the variable is a well-known one (NODE_NAME, KUBECONFIG).
KnobBinding Text(const char* name, const char* file_key, const char* env, const char* help,
                 std::string* (*field)(Config&)) {
  Config defaults;
  KnobBinding k;
  k.info = {name, file_key, FlagName(name), *env ? env : EnvName(name), *field(defaults), help};
  k.type = KnobType::kText;
  k.text = field;
  return k;
}

KnobBinding Integer(const char* name, const char* file_key, int min_value, const char* help,
                    int* (*field)(Config&)) {
  Config defaults;
  KnobBinding k;
  k.info = {name, file_key, FlagName(name), EnvName(name), std::to_string(*field(defaults)), help};
  k.type = KnobType::kInteger;
  k.integer = field;
  k.min_value = min_value;
  return k;
}

std::string Expectation(const KnobBinding& knob) {
  if (knob.type == KnobType::kInteger) return "expected an integer >= " + std::to_string(knob.min_value);
  if (!knob.allowed.empty()) return "expected one of: " + JoinNames(knob.allowed);
  return knob.non_empty ? "expected a non-empty string" : "expected a string";
}

// Both return "" when stored, otherwise what was expected and what was given.
std::string StoreInt(const KnobBinding& knob, int value, Config* config) {
  if (value < knob.min_value) return Expectation(knob) + ", got " + std::to_string(value);
  *knob.integer(*config) = value;
  return "";
}

std::string StoreText(const KnobBinding& knob, const std::string& value, Config* config) {
  if (knob.type == KnobType::kInteger) {
    int parsed = 0;
    const char* end = value.data() + value.size();
    auto [stop, ec] = std::from_chars(value.data(), end, parsed);
    if (value.empty() || ec != std::errc() || stop != end) return Expectation(knob) + ", got \"" + value + "\"";
    return StoreInt(knob, parsed, config);
  }
  bool allowed = knob.allowed.empty();
  for (const std::string& a : knob.allowed) allowed = allowed || a == value;
  if (!allowed || (knob.non_empty && value.empty())) return Expectation(knob) + ", got \"" + value + "\"";
  *knob.text(*config) = value;
  return "";
}

void Apply(const KnobBinding& knob, const std::string& value, const KnobOrigin& origin, Config* config,
           KnobOrigins* origins, Diagnostics& diag) {
  std::string problem = StoreText(knob, value, config);
  if (problem.empty()) {
    (*origins)[knob.info.name] = origin;
  } else {
    diag.ErrorAtLine(origin.path, origin.line, problem);
  }
}

}  // namespace

KnobBinding KnobBinding::OneOf(std::vector<std::string> values) const {
  KnobBinding k = *this;
  k.allowed = std::move(values);
  return k;
}

KnobBinding KnobBinding::NonEmpty() const {
  KnobBinding k = *this;
  k.non_empty = true;
  return k;
}

KnobBinding KnobBinding::Required(std::string note) const {
  KnobBinding k = NonEmpty();
  k.required = true;
  k.env_note = std::move(note);
  return k;
}

const std::vector<KnobBinding>& KnobBindings() {
  static const std::vector<KnobBinding> table = {
      Text("node_name", "node_name", "NODE_NAME", "this node's name, normally from the downward API",
           [](Config& c) { return &c.node_name; }).Required(" from the downward API"),
      Text("state_file", "state_file", "", "SQLite state file on a hostPath",
           [](Config& c) { return &c.state_file; }).Required(),
      Text("kubeconfig", "api.kubeconfig", "KUBECONFIG", "kubeconfig to use instead of the in-cluster service account",
           [](Config& c) { return &c.api.kubeconfig; }).NonEmpty(),
      Text("log_level", "tuning.log_level", "", "debug, info, warn or error",
           [](Config& c) { return &c.tuning.log_level; }).OneOf({"debug", "info", "warn", "error"}),
      Integer("workers", "tuning.workers", 1, "hooks running at once",
              [](Config& c) { return &c.tuning.workers; }),
      Integer("watch_timeout_seconds", "tuning.watch_timeout_seconds", 1,
              "server-side watch timeout; each watch picks a random value in [this, twice this)",
              [](Config& c) { return &c.tuning.watch_timeout_seconds; }),
      Integer("batch_window_ms", "tuning.batch_window_ms", 0,
              "merge changes to one object that come closer together than this",
              [](Config& c) { return &c.tuning.batch_window_ms; }),
      Integer("max_latency_ms", "tuning.max_latency_ms", 0,
              "handle an object at most this long after its first unhandled change",
              [](Config& c) { return &c.tuning.max_latency_ms; }),
      Integer("reconnect_initial_ms", "tuning.reconnect_initial_ms", 1,
              "first delay after a failed list or watch; doubles per failure, with full jitter",
              [](Config& c) { return &c.tuning.reconnect_initial_ms; }),
      Integer("reconnect_max_ms", "tuning.reconnect_max_ms", 1, "cap of the reconnect delay",
              [](Config& c) { return &c.tuning.reconnect_max_ms; }),
      Integer("stall_seconds", "tuning.stall_seconds", 1,
              "reopen a watch that sent nothing (not even a bookmark) for this long",
              [](Config& c) { return &c.tuning.stall_seconds; }),
      Integer("resync_seconds", "tuning.resync_seconds", 0, "full relist interval; 0 = never",
              [](Config& c) { return &c.tuning.resync_seconds; }),
      Text("health_address", "tuning.health_address", "",
           "HOST:PORT for /healthz, /readyz and /metrics (port 0 = any free port); empty = off",
           [](Config& c) { return &c.tuning.health_address; }),
      Integer("health_stale_seconds", "tuning.health_stale_seconds", 1,
              "/healthz fails once a watch has been silent this long while reconnecting keeps failing",
              [](Config& c) { return &c.tuning.health_stale_seconds; }),
      Integer("retry_base_seconds", "tuning.retry_base_seconds", 1, "first retry delay after a failed hook",
              [](Config& c) { return &c.tuning.retry_base_seconds; }),
      Integer("retry_max_seconds", "tuning.retry_max_seconds", 1, "cap of the exponential retry delay",
              [](Config& c) { return &c.tuning.retry_max_seconds; }),
      Integer("retry_factor", "tuning.retry_factor", 1, "multiplier of the retry delay after each failure",
              [](Config& c) { return &c.tuning.retry_factor; }),
      Integer("retry_jitter_percent", "tuning.retry_jitter_percent", 0, "random spread of each retry delay, in percent",
              [](Config& c) { return &c.tuning.retry_jitter_percent; }),
      Integer("retry_limit", "tuning.retry_limit", 0, "failures before a handler gives up (until the object changes); 0 = never",
              [](Config& c) { return &c.tuning.retry_limit; }),
      Integer("retry_total_seconds", "tuning.retry_total_seconds", 0,
              "time after the first attempt before a handler gives up; 0 = never",
              [](Config& c) { return &c.tuning.retry_total_seconds; }),
      Integer("in_progress_delay_seconds", "tuning.in_progress_delay_seconds", 1,
              "when a hook reports \"in progress\" without a delay, run it again after this long",
              [](Config& c) { return &c.tuning.in_progress_delay_seconds; }),
      Integer("gc_interval_seconds", "tuning.gc_interval_seconds", 1, "how often the state file is garbage-collected",
              [](Config& c) { return &c.tuning.gc_interval_seconds; }),
      Integer("gone_ttl_seconds", "tuning.gone_ttl_seconds", 0,
              "rows of an object gone this long, with nothing pending, are purged",
              [](Config& c) { return &c.tuning.gone_ttl_seconds; }),
      Integer("tombstone_ttl_seconds", "tuning.tombstone_ttl_seconds", 0,
              "forget a deleted object whose delete hook kept failing this long; 0 = never",
              [](Config& c) { return &c.tuning.tombstone_ttl_seconds; }),
      Integer("shutdown_grace_seconds", "tuning.shutdown_grace_seconds", 0,
              "after SIGTERM, how long running hooks may finish before they get SIGTERM, then SIGKILL",
              [](Config& c) { return &c.tuning.shutdown_grace_seconds; }),
      Text("after_state_recovery", "tuning.after_state_recovery", "",
           "after a damaged state file: adopt existing objects, or rerun their create hooks",
           [](Config& c) { return &c.tuning.after_state_recovery; }).OneOf({"adopt", "rerun"}),
      Text("hook_work_dir", "tuning.hook_work_dir", "", "directory for old/new/diff files (default: beside the state file)",
           [](Config& c) { return &c.tuning.hook_work_dir; }),
  };
  return table;
}

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
    bool right_type = knob.type == KnobType::kInteger ? value->IsInt() : value->IsString();
    if (!right_type) {
      bool fraction = knob.type == KnobType::kInteger && value->IsNumber();
      const char* got = fraction ? "a fraction or an out-of-range number" : JsonTypeName(*value);
      diag.ErrorAtLine(origin.path, origin.line, Expectation(knob) + ", got " + got);
    } else if (knob.type == KnobType::kInteger) {
      std::string problem = StoreInt(knob, value->GetInt(), config);
      if (!problem.empty()) diag.ErrorAtLine(origin.path, origin.line, problem);
      else (*origins)[knob.info.name] = origin;
    } else {
      Apply(knob, value->GetString(), origin, config, origins, diag);
    }
  }
}

void ApplyKnobOverrides(const ConfigSources& sources, Config* config, KnobOrigins* origins, Diagnostics& diag) {
  for (const KnobBinding& knob : KnobBindings()) {
    auto env = sources.env.find(knob.info.env);
    if (env != sources.env.end() && !env->second.empty()) {
      Apply(knob, env->second, {"env " + knob.info.env, 0}, config, origins, diag);
    }
  }
  for (const auto& [name, value] : sources.flags) {
    const KnobBinding* knob = nullptr;
    for (const KnobBinding& k : KnobBindings()) knob = k.info.name == name ? &k : knob;
    if (knob == nullptr) {
      diag.ErrorAtLine("flag " + FlagName(name), 0, "unknown knob");
      continue;
    }
    Apply(*knob, value, {"flag " + knob->info.flag, 0}, config, origins, diag);
  }
}

void CheckMergedKnobs(Config* config, const KnobOrigins& origins, Diagnostics& diag) {
  for (const KnobBinding& knob : KnobBindings()) {
    if (!knob.required || !knob.text(*config)->empty()) continue;
    diag.ErrorAtLine(knob.info.name, 0,
                     "not set (expected \"" + knob.info.file_key + "\" in the file, " + knob.info.flag + ", or " +
                         knob.info.env + knob.env_note + ")");
  }
  const Tuning& tuning = config->tuning;
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
