// The rows of the knob table, in the order `check-config`, the schema and --help show them.
#include <cctype>

#include "agent/config/knobs.h"

namespace nodehook {
namespace {

constexpr int kMinute = 60;
constexpr int kHour = 3600;
constexpr int kDay = 24 * kHour;
constexpr int kWeek = 7 * kDay;
constexpr int kYear = 365 * kDay;

// The part of the file key after the last dot: "tuning.workers" -> "workers".
std::string NameOf(const std::string& file_key) { return file_key.substr(file_key.rfind('.') + 1); }

std::string EnvName(const std::string& name) {
  std::string env = "NODEHOOK_" + name;
  for (char& c : env) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env;
}

// The part of Config that holds fields of type Section.
template <typename Section>
Section& SectionOf(Config& c);
template <>
Config& SectionOf<Config>(Config& c) { return c; }
template <>
Tuning& SectionOf<Tuning>(Config& c) { return c.tuning; }
template <>
ApiConnection& SectionOf<ApiConnection>(Config& c) { return c.api; }

template <typename Section, typename T>
std::function<T*(Config&)> Accessor(T Section::*field) {
  return [field](Config& c) { return &(SectionOf<Section>(c).*field); };
}

KnobBinding Row(const char* file_key, KnobType type, std::string default_value, std::string range, const char* help) {
  std::string name = NameOf(file_key);
  KnobBinding k;
  k.info = {name, file_key, KnobFlagName(name), EnvName(name), std::move(default_value), std::move(range), help};
  k.type = type;
  return k;
}

template <typename Section>
KnobBinding Text(const char* file_key, std::string Section::*field, const char* help) {
  Config defaults;
  KnobBinding k = Row(file_key, KnobType::kText, SectionOf<Section>(defaults).*field, "", help);
  k.text = Accessor(field);
  return k;
}

template <typename Section>
KnobBinding Int(const char* file_key, int Section::*field, int min_value, int max_value, const char* help) {
  Config defaults;
  KnobBinding k = Row(file_key, KnobType::kInteger, std::to_string(SectionOf<Section>(defaults).*field),
                      std::to_string(min_value) + " to " + std::to_string(max_value), help);
  k.integer = Accessor(field);
  k.min_value = min_value;
  k.max_value = max_value;
  return k;
}

template <typename Section>
KnobBinding Bool(const char* file_key, bool Section::*field, const char* help) {
  Config defaults;
  KnobBinding k = Row(file_key, KnobType::kBool, SectionOf<Section>(defaults).*field ? "true" : "false",
                      "true or false", help);
  k.info.is_switch = true;
  k.boolean = Accessor(field);
  return k;
}

// Ranges: the smallest value that makes sense, and a ceiling far above any sane setting that
// keeps every derived figure (milliseconds, the doubled watch timeout) well inside an int.

// Where the agent runs and what it may skip.
std::vector<KnobBinding> PlacementKnobs() {
  return {
    Text("node_name", &Config::node_name, "this node's name, normally from the downward API")
        .Env("NODE_NAME").Required(" from the downward API"),
    Text("state_file", &Config::state_file, "SQLite state file on a hostPath").Required(),
    Bool("allow_volatile_state", &Config::allow_volatile_state,
         "accept a state file on tmpfs/ramfs, which loses the state (and re-runs create hooks) on every reboot"),
    Bool("skip_hook_checks", &Config::skip_hook_checks,
         "do not check that each hook program exists and is executable (e.g. check-config away from the node)"),
    Text("api.kubeconfig", &ApiConnection::kubeconfig, "kubeconfig to use instead of the in-cluster service account")
        .Env("KUBECONFIG").NonEmpty(),
  };
}

// Logging, workers, and how changes reach them: watches, batching, reconnects, lists.
std::vector<KnobBinding> WatchKnobs() {
  return {
    Text("tuning.log_level", &Tuning::log_level, "how much to log").OneOf({"debug", "info", "warn", "error"}),
    Text("tuning.log_format", &Tuning::log_format, "logfmt, or json (one JSON object a line)").OneOf({"logfmt", "json"}),
    Int("tuning.workers", &Tuning::workers, 1, 256, "hooks running at once"),
    Int("tuning.watch_timeout_seconds", &Tuning::watch_timeout_seconds, 1, kDay,
        "server-side watch timeout; each watch picks a random value in [this, twice this)"),
    Int("tuning.batch_window_ms", &Tuning::batch_window_ms, 0, kMinute * 1000,
        "changes to an object handled less than this ago are merged and run this long after its last run"),
    Int("tuning.max_latency_ms", &Tuning::max_latency_ms, 0, 10 * kMinute * 1000,
        "cap of that wait"),
    Int("tuning.reconnect_initial_ms", &Tuning::reconnect_initial_ms, 1, 10 * kMinute * 1000,
        "first delay after a failed list or watch; doubles per failure, with full jitter"),
    Int("tuning.reconnect_max_ms", &Tuning::reconnect_max_ms, 1, kHour * 1000, "cap of the reconnect delay"),
    Int("tuning.stall_seconds", &Tuning::stall_seconds, 1, kDay,
        "reopen a watch that sent nothing (not even a bookmark) for this long"),
    Int("tuning.resync_seconds", &Tuning::resync_seconds, 0, kWeek, "full relist interval; 0 = never"),
    Text("tuning.list_strategy", &Tuning::list_strategy,
         "how lists are read: streaming (a watch with sendInitialEvents; a paginated list when it fails, and "
         "from then on if the server refuses it); paginated (consistent, 500 a page); watch_cache "
         "(resourceVersion=0, from the API server's watch cache)")
        .OneOf({"paginated", "watch_cache", "streaming"}),
  };
}

// The local endpoints.
std::vector<KnobBinding> EndpointKnobs() {
  return {
    Text("tuning.health_address", &Tuning::health_address,
         "HOST:PORT for /healthz, /readyz and /metrics (\":8090\" = every interface, IPv6 dual-stack; port 0 = any "
         "free port); empty = off"),
    Text("tuning.admin_address", &Tuning::admin_address,
         "HOST:PORT for POST /v1/retry; loopback only unless admin_token_file is set; empty = off"),
    Text("tuning.admin_token_file", &Tuning::admin_token_file,
         "file holding the bearer token POST /v1/retry requires; needed when admin_address is not loopback"),
    Text("tuning.boot_id_file", &Tuning::boot_id_file,
         "where a rollout's reboot step reads the kernel's boot ID; a new one proves the reboot")
        .NonEmpty(),
    Text("tuning.objects_endpoint", &Tuning::objects_endpoint,
         "GET /v1/objects on the health listener: on; no_messages (hooks' last messages left out); off")
        .OneOf({"on", "no_messages", "off"}),
    Int("tuning.health_stale_seconds", &Tuning::health_stale_seconds, 1, kDay,
        "/healthz fails once a watch has been silent this long while reconnecting keeps failing"),
  };
}

// Failed hooks and hooks in progress.
std::vector<KnobBinding> RetryKnobs() {
  return {
    Int("tuning.retry_base_seconds", &Tuning::retry_base_seconds, 1, kDay, "first retry delay after a failed hook"),
    Int("tuning.retry_max_seconds", &Tuning::retry_max_seconds, 1, kWeek, "cap of the exponential retry delay"),
    Int("tuning.retry_factor", &Tuning::retry_factor, 1, 100, "multiplier of the retry delay after each failure"),
    Int("tuning.retry_jitter_percent", &Tuning::retry_jitter_percent, 0, 100,
        "random spread of each retry delay, in percent"),
    Int("tuning.retry_limit", &Tuning::retry_limit, 0, 1'000'000,
        "failures before a handler gives up (until the object changes); 0 = never"),
    Int("tuning.retry_total_seconds", &Tuning::retry_total_seconds, 0, kYear,
        "time after the first attempt before a handler gives up; 0 = never"),
    Int("tuning.in_progress_delay_seconds", &Tuning::in_progress_delay_seconds, 1, kDay,
        "when a hook reports \"in progress\" without a delay, run it again after this long"),
  };
}

// The state file's upkeep, shutdown, hook files and the objects taken.
std::vector<KnobBinding> StateKnobs() {
  return {
    Int("tuning.gc_interval_seconds", &Tuning::gc_interval_seconds, 1, kWeek,
        "how often the state file is garbage-collected"),
    Int("tuning.gone_ttl_seconds", &Tuning::gone_ttl_seconds, 0, kYear,
        "rows of an object gone this long, with nothing pending, are purged"),
    Int("tuning.tombstone_ttl_seconds", &Tuning::tombstone_ttl_seconds, 0, kYear,
        "forget a deleted object whose delete hook kept failing this long (one not run yet is kept); 0 = never"),
    Int("tuning.finalizer_release_after_seconds", &Tuning::finalizer_release_after_seconds, 0, kYear,
        "release a node's finalizers once no agent pod was bound to it this long; 0 = only when its Node is gone"),
    Int("tuning.finalizer_release_not_ready_seconds", &Tuning::finalizer_release_not_ready_seconds, 0, kYear,
        "release a node's finalizers once its Node has not been Ready this long; 0 = never (the default)"),
    Int("tuning.state_event_hold_seconds", &Tuning::state_event_hold_seconds, 0, kHour,
        "a change of the state file's health must hold this long before it is reported again (Events, log)"),
    Int("tuning.shutdown_grace_seconds", &Tuning::shutdown_grace_seconds, 0, kHour,
        "after SIGTERM, how long running hooks may finish before they get SIGTERM, then SIGKILL"),
    Text("tuning.after_state_recovery", &Tuning::after_state_recovery,
         "after a damaged state file: adopt existing objects, or rerun their create hooks")
        .OneOf({"adopt", "rerun"}),
    Text("tuning.cross_node_writes", &Tuning::cross_node_writes,
         "who removes departed nodes' finalizers, grants rollout slots and frees an expired singleton Lease: "
         "the agents, or the steward (docs/security.md)")
        .OneOf({"agents", "steward"}),
    Text("tuning.hook_work_dir", &Tuning::hook_work_dir,
         "directory for old/new/diff files (default: beside the state file)"),
    Int("tuning.max_object_depth", &Tuning::max_object_depth, 1, 100'000,
        "objects nested deeper than this (brackets from their own top level) are quarantined"),
    Int("tuning.max_object_bytes", &Tuning::max_object_bytes, 1024, 256 * 1024 * 1024,
        "objects larger than this are quarantined"),
  };
}

// Cluster singletons (the Lease) and check hooks.
std::vector<KnobBinding> SingletonKnobs() {
  return {
    Text("tuning.lease_namespace", &Tuning::lease_namespace,
         "namespace of the singleton Lease (default: the pod's namespace)"),
    Text("tuning.lease_name", &Tuning::lease_name, "name of the Lease that elects the singleton leader"),
    Int("tuning.lease_duration_seconds", &Tuning::lease_duration_seconds, 4, kHour,
        "how long an unrenewed Lease stays its holder's before another agent takes it"),
    Int("tuning.lease_renew_deadline_seconds", &Tuning::lease_renew_deadline_seconds, 1, kHour,
        "a leader that could not renew for this long stops its singleton hooks"),
    Int("tuning.lease_retry_period_seconds", &Tuning::lease_retry_period_seconds, 1, 10 * kMinute,
        "how often the leader renews and the others try to acquire"),
    Int("tuning.max_concurrent_checks", &Tuning::max_concurrent_checks, 1, 64,
        "check hooks running at once, on threads of their own (never taking a worker)"),
  };
}

}  // namespace

std::string KnobFlagName(const std::string& name) {
  std::string flag = "--" + name;
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

KnobBinding KnobBinding::OneOf(std::vector<std::string> values) const {
  KnobBinding k = *this;
  k.info.range = JoinNames(values);
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

KnobBinding KnobBinding::Env(std::string variable) const {
  KnobBinding k = *this;
  k.info.env = std::move(variable);
  return k;
}

const std::vector<KnobBinding>& KnobBindings() {
  static const std::vector<KnobBinding> table = [] {
    std::vector<KnobBinding> all;
    for (auto group : {&PlacementKnobs, &WatchKnobs, &EndpointKnobs, &RetryKnobs, &StateKnobs, &SingletonKnobs}) {
      for (KnobBinding& k : group()) all.push_back(std::move(k));
    }
    return all;
  }();
  return table;
}

}  // namespace nodehook
