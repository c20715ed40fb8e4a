// The agent's configuration: one JSON file, plus a flag and an environment variable for every
// tuning knob (precedence: flag > environment > file > default). Value types; not synchronized.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

// The reasons a hook can run for. Kept as strings in the state store and the hook environment.
inline constexpr const char* kReasonCreate = "create";
inline constexpr const char* kReasonUpdate = "update";
inline constexpr const char* kReasonDelete = "delete";
inline constexpr const char* kReasonResume = "resume";
// Raw events: every observed change (ADDED, MODIFIED, DELETED), each one handled and retried on
// its own, in order, durably.
inline constexpr const char* kReasonEvent = "event";
// Periodic drift check of each handled object (check_lane.h), and one run over every object of a
// resource this node handles (snapshot_lane.h). Neither moves the diffbase.
inline constexpr const char* kReasonCheck = "check";
inline constexpr const char* kReasonSnapshot = "snapshot";
// A rollout's verify hook (RolloutPolicy::verify), run after a gated handler succeeded.
inline constexpr const char* kReasonVerify = "verify";

struct HookSpec {
  std::vector<std::string> argv;
  std::chrono::seconds timeout{60};
  // Per-hook limits before a failure becomes permanent; 0 = use the tuning default.
  int max_retries = 0;
  int max_total_seconds = 0;
  // "check" only: how often each handled object is checked, and the +- share of each interval
  // drawn at random per run so a fleet does not run in step.
  int interval_seconds = 0;
  int jitter_percent = 10;
  // "snapshot" only: run once after the first list even when the objects are the ones the last
  // successful run saw.
  bool run_on_start = false;
};

// A number of nodes, or a percentage of the nodes that handle the resource (rounded up, at least 1
// when the percentage is above 0).
struct NodeCount {
  int value = 0;
  bool percent = false;
  // The count for a fleet of `nodes`.
  int Resolve(int nodes) const;
};

// A maintenance window: gated work starts only inside one. `cron` is a 5-field cron expression
// (minute hour day-of-month month day-of-week) for the window's starts, judged in `time_zone`
// (an IANA name such as "Europe/Berlin"; "UTC" by default); each start opens it for `duration`.
struct RolloutWindow {
  std::string cron;
  std::chrono::seconds duration{0};
  std::string time_zone = "UTC";
};

// Node steps around a rollout's gated hook (docs/rollouts.md, "Node steps"): each is recorded in
// the state file, so an agent that restarts resumes the step it was in.
// drain: every pod on the node evicted through the Eviction API (PodDisruptionBudgets hold), but
// DaemonSet pods, mirror pods and the agent's own pod; a drain implies the cordon.
struct DrainPolicy {
  std::chrono::seconds timeout{600};  // not drained by then: the node fails the object state
  std::string pod_selector;           // a label selector: only these pods; "" = every pod
  int grace_period_seconds = -1;      // each eviction's grace period (1 or more); -1 = each pod's own
  // As kubectl drain's --force and --delete-emptydir-data: without them a pod that declares no
  // controller, or one with an emptyDir volume, is refused and holds the drain (named, never evicted).
  bool force = false;
  bool delete_emptydir_data = false;
};
// reboot: run when the hook's result file says {"reboot": true}; proven by a new boot ID.
struct RebootPolicy {
  std::vector<std::string> argv;
  std::chrono::seconds timeout{900};  // no new boot ID by then: the node fails the object state
};
enum class OnFailure { kKeepCordoned, kUncordon };
// Node annotations that say which rollout cordoned the Node, one per rollout: <prefix><rollout id>.
inline constexpr const char* kCordonMarkPrefix = "nodehook.io/cordoned-";
const char* OnFailureName(OnFailure on_failure);

// A resource's rollout policy (opt-in, docs/rollouts.md): at most `max_nodes` nodes inside the
// gate at once, canaries first, a soak after success, a halt after too many failed nodes.
struct RolloutPolicy {
  NodeCount max_nodes{1, false};
  int canary_nodes = 0;
  std::chrono::seconds soak{0};
  std::optional<HookSpec> verify;  // run after success, before the soak; failing = the node failing
  NodeCount max_failed_nodes{1, false};
  int failure_after_retries = 3;   // failed attempts after which a node counts as failed
  std::vector<std::string> reasons{"create", "update"};
  std::vector<RolloutWindow> windows;  // none = always open
  std::string hold_label = "nodehook.io/rollout-hold";  // a Node label that holds gated work there
  std::chrono::seconds slot_lease{15};  // a slot holder renews within this, or loses the slot
  // The coordinator grants at most this many slots a second, whatever the fleet's size: each grant
  // starts a few writes (take, renewals, result, release), and the nodes spread their asks to come
  // at kAsksPerGrant times this rate, so it bounds the API server's work per second for the
  // rollout (docs/fleet-cost.md).
  double max_grants_per_second = 20;
  // Node steps (opt-in).
  bool cordon = false;
  std::optional<DrainPolicy> drain;
  std::optional<RebootPolicy> reboot;
  OnFailure on_failure = OnFailure::kKeepCordoned;  // a node that fails: left cordoned, or not
  bool Cordons() const { return cordon || drain.has_value(); }
  bool HasNodeSteps() const { return Cordons() || reboot.has_value(); }
};

// An object annotation, written by people (or `kubectl nodehook rollout pause`): while present,
// that object's rollout starts on no further node.
inline constexpr const char* kRolloutPausedAnnotation = "nodehook.io/rollout-paused";
// The paused annotation's value that stops the nodes inside too: work that started (a drain, a
// hook between its retries) ends, and its cordon is given back; any other value lets it finish.
inline constexpr const char* kRolloutStopNodes = "stop-nodes";
// Written by `kubectl nodehook rollout resume`: the digest of a halted state that continues anyway.
inline constexpr const char* kRolloutResumeAnnotation = "nodehook.io/rollout-resume";

struct WatchedResource {
  ResourceRef ref;
  // Node targeting (opt-in): dotted path of a label-map node selector in the object, e.g.
  // "spec.nodeSelector". "" = every node acts on every object.
  std::string node_selector_path;
  // Per-node finalizer mode (opt-in), for multi-step deletion.
  bool finalizer = false;
  // Post a Normal Event when a handler succeeds (Warning Events for permanent failures are always on).
  bool success_events = false;
  // Dotted paths removed from the essence before comparing, e.g. "metadata.annotations.note".
  std::vector<std::string> ignored_paths;
  std::map<std::string, HookSpec> hooks;  // by reason; a missing reason means "nothing to run"
  // Cluster-singleton (opt-in): only the agent holding the Lease runs this resource's hooks, and
  // the state it handled is written to the object's kSingletonHandledAnnotation for the next one.
  bool singleton = false;
  // Fleet rollout (opt-in): the policy that gates this resource's disruptive hooks.
  std::optional<RolloutPolicy> rollout;
  // Node outputs (opt-in, "node_outputs"): the type of the NodeCondition this resource keeps on
  // the agent's own Node, derived from its objects' states here (outputs/node_condition.h); "" = none.
  std::string node_condition;
  // The key prefixes under which its hooks may publish node outputs ("node" in a result file:
  // labels, annotations, conditions, taints; outputs/published_outputs.h). Empty = none may.
  std::vector<std::string> node_output_prefixes;
  // A condition on each object (opt-in, "ready_condition", e.g. "Ready"): True once every node
  // that handles it has handled its current state (readiness/ready_judge.h); "" = none.
  std::string ready_condition;
};

// The annotation holding the digest of the essence a singleton resource's leader last handled.
inline constexpr const char* kSingletonHandledAnnotation = "nodehook.io/singleton-handled";
// The one cluster-wide finalizer of a singleton resource: claimed by the leader before the first
// hook of an object, removed only after its delete hook succeeded (finalizers/singleton_finalizer.h).
inline constexpr const char* kSingletonFinalizer = "nodehook.io/singleton";

struct ApiConnection {
  bool in_cluster = false;
  std::string kubeconfig;  // used when !in_cluster
};

// Every field here is a knob: settable in the file under "tuning", by flag and by environment.
struct Tuning {
  std::string log_level = "info";
  std::string log_format = "logfmt";
  int workers = 4;                          // hooks running at once
  int watch_timeout_seconds = 300;          // server-side timeoutSeconds: random in [this, 2x this)
  int batch_window_ms = 100;                // changes to one object closer than this are handled once
  int max_latency_ms = 1000;                // ...but never later than this after the first change
  int reconnect_initial_ms = 800;           // first delay after a failed list/watch (client-go: 0.8 s)
  int reconnect_max_ms = 30'000;            // cap of the jittered exponential reconnect delay
  int stall_seconds = 90;                   // a watch silent this long (no byte, no bookmark) is reopened
  int resync_seconds = 1800;                // full relist this often; 0 = never
  std::string list_strategy = "streaming";  // streaming, paginated or watch_cache (list_strategy.h)
  std::string health_address = ":8090";          // /healthz, /readyz, /metrics (every interface); "" = off
  std::string admin_address = "127.0.0.1:8091";  // POST /v1/retry; loopback unless admin_token_file; "" = off
  std::string admin_token_file = "";             // bearer token the admin endpoint requires; "" = none
  // Where a rollout's reboot step reads the boot ID (a new one proves the reboot).
  std::string boot_id_file = "/proc/sys/kernel/random/boot_id";
  std::string objects_endpoint = "on";           // GET /v1/objects: "on", "no_messages" or "off"
  int health_stale_seconds = 150;           // /healthz fails when a failing watch was silent this long
  int retry_base_seconds = 1;               // first retry delay after a failed hook
  int retry_max_seconds = 300;              // cap of the exponential retry delay
  int retry_factor = 2;                     // each failure multiplies the delay by this
  int retry_jitter_percent = 10;            // +- this share of each delay, so retries spread out
  int retry_limit = 0;                      // failures before giving up; 0 = never give up
  int retry_total_seconds = 0;              // give up this long after the first attempt; 0 = never
  int in_progress_delay_seconds = 10;       // look again this soon when a hook says "in progress"
  int gc_interval_seconds = 3600;           // how often rows of vanished objects are purged
  // A change of the state file's health (failing, recovered) is reported once it has held this
  // long, unless nothing was reported for as long: an operation that fails every other time
  // posts one failing Event, not one per flip.
  int state_event_hold_seconds = 60;
  int gone_ttl_seconds = 3600;              // ...once they have been gone this long with nothing pending
  int tombstone_ttl_seconds = 604800;       // give up a deletion whose delete hook keeps failing; 0 = never
  // Finalizer mode: a node's finalizers come off deleting objects once no agent pod of this
  // DaemonSet has been bound to it this long (docs/hooks.md); 0 = only when its Node is gone.
  int finalizer_release_after_seconds = 600;
  // Finalizer mode: a node's finalizers come off deleting objects once its Node has not been Ready
  // this long (a node powered off for good keeps its Node and its bound agent pod); 0 = never,
  // the default: a node that is only cut off comes back and runs its delete hooks (docs/hooks.md).
  int finalizer_release_not_ready_seconds = 0;
  // After SIGTERM, running hooks get this long to finish before they are stopped. With the 2 s
  // kill delay it must fit in the pod's terminationGracePeriodSeconds (60 in deploy/).
  int shutdown_grace_seconds = 45;
  // After a damaged state file was moved aside: "adopt" stores existing objects as handled without
  // create hooks (this node most likely handled them); "rerun" runs create for every object.
  std::string after_state_recovery = "adopt";
  // Who does the work that crosses nodes (departed nodes' finalizers, rollout grants, freeing an
  // expired singleton Lease): "agents" (each agent, as before) or "steward" (the nodehook steward,
  // under its own ServiceAccount, so the node-bound admission rules can confine every agent to its
  // own node: docs/security.md).
  std::string cross_node_writes = "agents";
  std::string hook_work_dir = "";           // where old/new/diff files go; "" = next to the state file
  int max_object_depth = 1000;              // deeper objects are quarantined (skipped, reported)
  int max_object_bytes = 4 << 20;           // ...and so are larger ones
  // Cluster-singleton resources (leader_election.h): the Lease that picks the one agent that
  // runs their hooks. "" namespace = the pod's (service account namespace file, $POD_NAMESPACE).
  std::string lease_namespace = "";
  std::string lease_name = "nodehook-singleton";
  int lease_duration_seconds = 15;          // client-go's defaults
  int lease_renew_deadline_seconds = 10;
  int lease_retry_period_seconds = 2;
  int max_concurrent_checks = 1;            // check hooks running at once, on their own threads
};

struct Config {
  std::string node_name;   // default: $NODE_NAME (downward API)
  std::string state_file;  // SQLite file on a hostPath
  bool allow_volatile_state = false;  // accept a state file on tmpfs/ramfs (lost on every reboot)
  bool skip_hook_checks = false;      // do not check that each hook's program exists and is executable
  ApiConnection api;
  std::vector<WatchedResource> resources;
  Tuning tuning;
  // Where rollout windows' time zones are read (agent/calendar/time_zone.h): $TZDIR when set,
  // else /usr/share/zoneinfo. Not a file key: the image has its tzdata there.
  std::string zoneinfo_dir;
};

// One problem found in the config: where, and what was expected.
struct ConfigError {
  std::string path;  // key path, e.g. "resources[0].hooks.create.argv"; "" for syntax errors
  int line = 0;      // 1-based line in the file, 0 when unknown (flags, environment)
  std::string message;

  // "FILE:LINE: resources[0].plural: expected a non-empty string"; "FILE: env X: ..." when line is 0;
  // the "path: " part is left out when path is empty.
  std::string ToString(const std::string& file) const;
};

// Checks a hook's program on this machine: "" when the agent could run it, else why not.
using ProgramCheck = std::function<std::string(const std::string& program)>;

// Where knob overrides come from besides the file, and the machine the config is checked on.
struct ConfigSources {
  std::map<std::string, std::string> flags;  // knob name ("workers") -> value given on the command line
  std::map<std::string, std::string> env;    // the process environment (NODE_NAME, NODEHOOK_WORKERS, ...)
  // Unset: hook programs are not looked at (pure parsing). Set: each hook's argv[0] is checked
  // with it unless the merged config says skip_hook_checks.
  ProgramCheck check_program;
};

// ConfigSources with `env` read from this process's environment, no flags, and hook programs
// checked on this machine (ProgramProblem).
ConfigSources EnvironmentSources();

struct ConfigResult {
  Config config;
  std::vector<ConfigError> errors;  // empty means valid
  bool ok() const { return errors.empty(); }
};

// Parses and validates. Unknown keys are errors. All problems are reported, not just the first.
ConfigResult LoadConfigFile(const std::string& path, const ConfigSources& sources);
ConfigResult ParseConfig(const std::string& text, const ConfigSources& sources);

// The knob table, for --help and the README: name, flag, environment variable, default.
struct KnobInfo {
  std::string name;      // "workers"
  std::string file_key;  // "tuning.workers" or "node_name"
  std::string flag;      // "--workers"
  std::string env;       // "NODEHOOK_WORKERS"
  std::string default_value;
  std::string range;  // the accepted values: "1 to 256", "true or false", "adopt, rerun"; "" = any text
  std::string help;
  bool is_switch = false;  // true or false; on the command line a flag without a value means true
};
const std::vector<KnobInfo>& Knobs();

// Loads what a valid config points at outside itself (the kubeconfig or in-cluster files) and
// says what is wrong with it. Given by the caller so this library does not depend on the client.
using ConnectionCheck = std::function<Status(const Config&)>;

// The node name an offline check uses when NODE_NAME is not set, so {node} selectors are checked.
inline constexpr const char* kOfflineNodeName = "offline-check";

// `sources` for checking the file alone, off the node (in CI): no hook program is looked at and
// a missing NODE_NAME becomes kOfflineNodeName. (No connection check either: the caller's part.)
ConfigSources OfflineSources(ConfigSources sources);

// `nodehook check-config [--offline] FILE`: loads and validates, then runs `check_connection`
// (when given). Returns 0 and prints a short summary (node, state file, API connection,
// resources and their hooks) to `out` when valid; returns 2 and prints each problem on its own
// line ("FILE:LINE: path: message", or "FILE: api: message" for the connection) to `err` when not.
// When `sources` check hook programs and some problems are about this machine only (a hook
// program, NODE_NAME, the credentials), a last line says how to check the file off the node.
int RunCheckConfig(const std::string& path, const ConfigSources& sources, std::ostream& out, std::ostream& err,
                   const ConnectionCheck& check_connection = nullptr);

}  // namespace nodehook
