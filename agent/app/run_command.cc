#include "agent/app/run_command.h"

#include <algorithm>
#include <cstdlib>

#include "agent/process/memory_work_dir.h"
#include "agent/process/orphan_reaper.h"
#include "agent/process/process_runner.h"
#include "agent/process/remove_tree.h"
#include "agent/app/health_service.h"
#include "agent/app/signal_watcher.h"
#include "agent/base/heap.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/pipeline/agent.h"
#include "agent/election/election_setup.h"
#include "agent/finalizers/agent_pods.h"
#include "agent/kube/credentials/connection_config.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/state/observed_state_store.h"
#include "agent/state/store_health.h"
#include "storage/state_file.h"
#include "storage/state_lock.h"

namespace nodehook {
namespace {

Result<TransportConfig> ConnectionFor(const Config& config) {
  Result<TransportConfig> transport =
      config.api.in_cluster ? LoadInClusterConfig() : LoadKubeconfig(config.api.kubeconfig);
  if (!transport.ok()) return transport;
  // cpprest's timeout restarts on every read, so it is our stall detector: a watch that sends
  // no byte (not even a bookmark) for this long is dropped and reopened.
  transport->idle_timeout_seconds = config.tuning.stall_seconds;
  return transport;
}

void SweepHookWorkDir(const std::string& work_dir) {
  auto swept = SweepScratchDirs(work_dir);
  if (!swept.ok()) {
    Log(LogLevel::kWarn, "hook scratch directories not swept",
        {{"dir", work_dir}, {"error", swept.status().message()}, {"next", "start anyway; try again at the next start"}});
  } else if (*swept > 0) {
    Log(LogLevel::kInfo, "hook scratch directories swept",
        {{"dir", work_dir}, {"removed", *swept}, {"next", "start"}});
  }
}

// tuning.hook_work_dir, else a private directory in memory, else next to the state file.
std::string ResolveHookWorkDir(const Config& config) {
  if (!config.tuning.hook_work_dir.empty()) return config.tuning.hook_work_dir;
  std::vector<std::string> refused;
  std::optional<std::string> memory = ChooseMemoryWorkDir(DefaultMemoryRoots(), config.state_file, &refused);
  for (const std::string& why : refused) {
    Log(LogLevel::kWarn, "memory-backed hook work directory refused",
        {{"reason", why}, {"next", memory ? "use " + *memory : "try the next one, else the state directory"}});
  }
  std::string dir = memory.value_or(DefaultHookWorkDir(config.state_file));
  Log(LogLevel::kInfo, "hook work directory chosen",
      {{"dir", dir}, {"in_memory", memory.has_value()}, {"next", "sweep it"}});
  return dir;
}

// Loud in three places: the log (OpenStateForAgent), the metrics and an Event on the Node.
void ReportStateAtStart(const OpenedState& state, const std::string& state_file, Agent& agent) {
  if (state.recovered_from_corruption) {
    DefaultMetrics().GetCounter("state_file_recoveries_total", "damaged state files moved aside at start").Increment();
    agent.ReportNodeEvent("state", "StateRecovered", true,
                          "state file " + state_file + " was damaged (" + state.corruption_detail + "); moved to " +
                              state.moved_aside_to + " and started fresh");
  }
  if (state.state_file_missing) {
    DefaultMetrics()
        .GetCounter("state_file_missing_total", "state files found missing at start where an agent had run before")
        .Increment();
    agent.ReportNodeEvent("state", "StateFileMissing", true,
                          "state file " + state_file + " is gone (its lock file shows an agent ran here before); "
                          "started with an empty state: every create hook runs again");
  }
}

// Finalizer mode judges which nodes still have an agent by this DaemonSet's pods, found from the
// agent's own pod (downward API). Without them, a node's finalizers come off only when its Node
// is gone, as before finalizer_release_after_seconds existed: never sooner than they should.
std::optional<ResourceRef> AgentPodsFor(const Config& config, KubeClient& client, const CancelToken& stop) {
  bool finalizers = false;
  for (const auto& r : config.resources) finalizers = finalizers || r.finalizer;
  if (!finalizers || config.tuning.finalizer_release_after_seconds == 0) return std::nullopt;
  const char* ns = std::getenv("POD_NAMESPACE");
  const char* name = std::getenv("POD_NAME");
  const std::string next = "release a node's finalizers only when its Node is gone";
  if (!ns || !*ns || !name || !*name) {
    // Off the cluster (a test, a demo) this is expected; in a pod it is a DaemonSet without POD_NAME.
    Log(ns && *ns ? LogLevel::kWarn : LogLevel::kInfo, "agent pods unknown",
        {{"error", "POD_NAMESPACE and POD_NAME (downward API) are not both set"}, {"next", next}});
    return std::nullopt;
  }
  auto pods = WaitForAgentPods(client, ns, name, SystemClock::Instance(), stop);
  if (!pods.ok()) {
    if (pods.status().code() != StatusCode::kCancelled) {
      Log(LogLevel::kWarn, "agent pods unknown",
          {{"pod", std::string(ns) + "/" + name}, {"error", pods.status().ToString()},
           {"next", next + " (a 403: render the RBAC again with `nodehook rbac`)"}});
    }
    return std::nullopt;
  }
  Log(LogLevel::kInfo, "agent pods found",
      {{"namespace", pods->namespace_name}, {"selector", pods->label_selector},
       {"release_after_seconds", config.tuning.finalizer_release_after_seconds},
       {"next", "watch them; a node without one this long loses its finalizers on deleting objects"}});
  return std::move(pods).value();
}

}  // namespace

Status CheckConnection(const Config& config) { return ConnectionFor(config).status(); }

int RunAgent(const Config& given) {
  Config config = given;  // the hook work directory is resolved below
  // Before anything logs (the orphan reaper does, below): every line in the configured format.
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.tuning.log_level, &level);
  SetLogLevel(level);
  LogFormat format = LogFormat::kLogfmt;
  ParseLogFormat(config.tuning.log_format, &format);
  SetLogFormat(format);
  // Two arenas serve a dozen threads well; one each would keep megabytes of RSS per thread.
  LimitHeapArenas(2);
  // First, before any library starts threads: they inherit the blocked signal mask, so only
  // the watcher thread ever sees SIGINT/SIGTERM.
  OrphanReaper orphans;  // blocks SIGCHLD: before the signal watcher, so its thread inherits that too
  SignalWatcher signals;
  const CancelToken& stop = signals.stop();

  RegisterProcessMetrics(DefaultMetrics(), NODEHOOK_VERSION);

  auto connection = ConnectionFor(config);
  if (!connection.ok()) {
    Log(LogLevel::kError, "cannot configure the API connection",
        {{"error", connection.status().ToString()}, {"next", "exit 1"}});
    return 1;
  }
  // Cluster-singleton resources need the Lease's namespace: known before any waiting, or exit.
  Config effective = config;
  if (HasSingletonResources(config)) {
    const char* pod_namespace = std::getenv("POD_NAMESPACE");
    auto lease_namespace =
        ResolveLeaseNamespace(config, pod_namespace ? pod_namespace : "", kServiceAccountNamespaceFile);
    if (!lease_namespace.ok()) {
      Log(LogLevel::kError, "cannot elect a singleton leader",
          {{"error", lease_namespace.status().ToString()}, {"next", "exit 1"}});
      return 1;
    }
    effective.tuning.lease_namespace = *lease_namespace;
  }
  std::unique_ptr<HealthService> health;
  LocalEndpointsConfig endpoints{config.tuning.health_address, config.tuning.admin_address,
                                 config.tuning.admin_token_file, std::chrono::seconds(config.tuning.health_stale_seconds),
                                 config.tuning.objects_endpoint};
  if (!endpoints.health_address.empty() || !endpoints.admin_address.empty()) {
    auto started = HealthService::Start(endpoints);
    if (!started.ok()) {
      Log(LogLevel::kError, "cannot serve local endpoints",
          {{"health_address", endpoints.health_address}, {"admin_address", endpoints.admin_address},
           {"error", started.status().ToString()}, {"next", "exit 1"}});
      return 1;
    }
    health = std::move(started).value();
    health->SetWaiting("state lock " + config.state_file);
  }
  // Refuse a missing, read-only, network or (unless allowed) in-memory state directory before
  // waiting for any lock.
  StateDirectoryRules dir_rules;
  dir_rules.allow_volatile = config.allow_volatile_state;
  if (Status dir = CheckStateDirectory(config.state_file, dir_rules); !dir.ok()) {
    Log(LogLevel::kError, "unusable state directory", {{"error", dir.ToString()}, {"next", "exit 1"}});
    return 1;
  }
  // A full disk is refused the same way whether the last stop was clean or a kill (state_file.h).
  if (Status space = CheckStateFreeSpace(config.state_file); !space.ok()) {
    Log(LogLevel::kError, "cannot open the state file",
        {{"state_file", config.state_file}, {"error", space.ToString()}, {"next", "exit 1"}});
    return 1;
  }
  // One writer per state file: a second copy on this node waits here, not ready and not acting.
  auto lock = StateLock::Acquire(config.state_file, stop, [&](const std::string& holder) {
    Log(LogLevel::kWarn, "state file locked by another agent",
        {{"state_file", config.state_file}, {"holder", holder}, {"next", "wait for it to exit, then take over"}});
  });
  if (!lock.ok()) {
    bool stopped = lock.status().code() == StatusCode::kCancelled;
    Log(stopped ? LogLevel::kInfo : LogLevel::kError, "state lock not taken",
        {{"state_file", config.state_file}, {"error", lock.status().ToString()}, {"next", "exit"}});
    return stopped ? 0 : 1;
  }
  // Resolved once, so every part of the agent uses the directory checked here.
  config.tuning.hook_work_dir = ResolveHookWorkDir(config);
  effective.tuning.hook_work_dir = config.tuning.hook_work_dir;
  const std::string& scratch = config.tuning.hook_work_dir;
  // Make what older versions left readable by others private.
  if (Status dir = PrepareStateDirectory(config.state_file, scratch, dir_rules); !dir.ok()) {
    Log(LogLevel::kError, "cannot make the state private",
        {{"state_file", config.state_file}, {"error", dir.ToString()}, {"next", "exit 1"}});
    return 1;
  }
  // Ours alone now: what hooks of an earlier run left behind can go.
  SweepHookWorkDir(scratch);
  // Integrity check; a damaged file is moved aside (logged there) and the store starts fresh.
  StoreOptions store_options;
  store_options.metrics = &DefaultMetrics();
  PriorUse prior{lock->lock_file_existed(), lock->previous_holder()};
  auto state = OpenStateForAgent(config.state_file, config.node_name, store_options, SystemClock::Instance(),
                                 dir_rules, prior);
  if (!state.ok()) {
    Log(LogLevel::kError, "cannot open the state file",
        {{"state_file", config.state_file}, {"error", state.status().ToString()}, {"next", "exit 1"}});
    return 1;
  }
  // Every write's Status feeds the store's health: metrics, readiness, Events, retry cadence.
  StoreHealthOptions health_options;
  health_options.state_file = config.state_file;
  health_options.retry_max = std::chrono::seconds(config.tuning.retry_max_seconds);
  // Past the longest retry delay (store_health.h), so a failure still being retried is never let go.
  health_options.forget_after = 2 * std::max(health_options.retry_base, health_options.retry_max);
  StoreHealth store_health(SystemClock::Instance(), health_options);
  ObservedStateStore store(*state->store, *state->store, store_health);
  RestKubeClient client(NewCpprestTransport(std::move(connection).value()),
                        ObjectLimits{config.tuning.max_object_depth, static_cast<size_t>(config.tuning.max_object_bytes)},
                        &DefaultMetrics());
  ProcessRunner runner;
  signals.OnSecondSignal([&runner] { runner.KillAllNow(); });

  AgentOptions agent_options;
  agent_options.store_retry_delay = [&store_health] { return store_health.RetryDelay(); };
  if (HasSingletonResources(effective)) {
    const char* pod_uid = std::getenv("POD_UID");
    agent_options.election = ElectionOptionsFor(effective, pod_uid ? pod_uid : "");
  }
  if (health) health->SetWaiting("own pod");
  agent_options.agent_pods = AgentPodsFor(effective, client, stop);
  if (stop.cancelled()) return 0;
  Agent agent(effective, client, store, store, runner, SystemClock::Instance(), std::move(agent_options));
  store_health.SetListener([&agent](const StoreHealthChange& change) {
    agent.ReportNodeEvent("state", change.failing ? "StateWritesFailing" : "StateWritesRecovered", change.failing,
                          change.note);
  });
  ReportStateAtStart(*state, config.state_file, agent);
  if (health) health->Attach(&agent, [&store_health] { return store_health.ReadinessProblem(); });
  agent.Run(stop);
  if (health) health->Detach();
  store_health.SetListener(nullptr);
  // Nothing may touch the runner once it is gone; until the process exits, a second signal
  // still exits at once.
  signals.OnSecondSignal(nullptr);
  return 0;
}

}  // namespace nodehook
