#include "agent/app/run_command.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "agent/process/orphan_reaper.h"
#include "agent/process/process_runner.h"
#include "agent/app/health_service.h"
#include "agent/app/run_state.h"
#include "agent/app/signal_watcher.h"
#include "agent/base/heap.h"
#include "agent/base/log.h"
#include "agent/readiness/crd_status_check.h"
#include "agent/base/metrics.h"
#include "agent/pipeline/agent.h"
#include "agent/election/election_setup.h"
#include "agent/finalizers/agent_pods.h"
#include "agent/finalizers/agent_revisions.h"
#include "agent/kube/credentials/connection_config.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/client/transient_retry.h"
#include "agent/outputs/own_tolerations.h"

namespace nodehook {
namespace {

Result<TransportConfig> ConnectionFor(const Config& config) {
  Result<TransportConfig> transport =
      LoadConnection(config.api.in_cluster ? "" : config.api.kubeconfig, WithoutKubeconfig::kInCluster);
  if (!transport.ok()) return transport;
  // cpprest's timeout restarts on every read, so it is our stall detector: a watch that sends
  // no byte (not even a bookmark) for this long is dropped and reopened.
  transport->idle_timeout_seconds = config.tuning.stall_seconds;
  return transport;
}

// Finalizer mode judges which nodes still have an agent by this DaemonSet's pods, found from the
// agent's own pod (downward API). Without them, a node's finalizers come off only when its Node
// is gone, as before finalizer_release_after_seconds existed: never sooner than they should.
std::optional<ResourceRef> AgentPodsFor(const Config& config, const PodEnvironment& pod, KubeClient& client,
                                        const CancelToken& stop) {
  bool finalizers = false;
  for (const auto& r : config.resources) finalizers = finalizers || r.finalizer;
  if (!finalizers || config.tuning.finalizer_release_after_seconds == 0) return std::nullopt;
  const std::string next = "release a node's finalizers only when its Node is gone";
  if (!pod.KnowsPod()) {
    // Off the cluster (a test, a demo) this is expected; in a pod it is a DaemonSet without POD_NAME.
    Log(!pod.pod_namespace.empty() ? LogLevel::kWarn : LogLevel::kInfo, "agent pods unknown",
        {{"error", "POD_NAMESPACE and POD_NAME (downward API) are not both set"}, {"next", next}});
    return std::nullopt;
  }
  auto pods = WaitForAgentPods(client, pod.pod_namespace, pod.pod_name, SystemClock::Instance(), stop);
  if (!pods.ok()) {
    if (pods.status().code() != StatusCode::kCancelled) {
      Log(LogLevel::kWarn, "agent pods unknown",
          {{"pod", pod.PodKey()}, {"error", pods.status().ToString()},
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

// A hook's NoExecute taint must not evict the agent from its own node (own_tolerations.h): with
// node outputs, the tolerations are read from the agent's own pod, waited for while the API is
// unreachable. Off the cluster (no pod, nothing to evict) nothing is judged; in one whose pod is
// not known or cannot be read, every NoExecute taint is refused.
std::shared_ptr<const OwnTolerations> OwnTolerationsFor(const Config& config, const PodEnvironment& pod,
                                                        KubeClient& client, const CancelToken& stop) {
  const bool publishes = std::any_of(config.resources.begin(), config.resources.end(),
                                     [](const WatchedResource& r) { return !r.node_output_prefixes.empty(); });
  if (!publishes) return nullptr;
  auto own = std::make_shared<OwnTolerations>();
  if (!pod.KnowsPod()) {
    if (!config.api.in_cluster) return nullptr;
    own->unknown_why = "POD_NAMESPACE and POD_NAME (downward API) are not both set";
  } else {
    own->pod = pod.PodKey();
    const std::string& ns = pod.pod_namespace;
    Result<std::vector<Toleration>> read = RetryWhileTransient<std::vector<Toleration>>(
        [&]() -> Result<std::vector<Toleration>> {
          Result<KubeObject> own_pod = client.Get(ObjectRef{ResourceRef{"", "v1", "pods", ns, ""}, ns, pod.pod_name});
          if (!own_pod.ok()) return own_pod.status();
          return ParseTolerations(own_pod->json);
        },
        SystemClock::Instance(), stop, [&](const Status& error, Duration wait) { LogOwnPodNotRead(own->pod, error, wait); });
    if (stop.cancelled()) return nullptr;
    if (read.ok()) {
      own->tolerations = std::move(read).value();
      Log(LogLevel::kInfo, "own tolerations read",
          {{"pod", own->pod}, {"tolerations", own->tolerations->size()},
           {"next", "refuse a hook's NoExecute taint that they do not tolerate"}});
      return own;
    }
    own->unknown_why = "its pod " + own->pod + " could not be read: " + read.status().ToString();
  }
  Log(LogLevel::kWarn, "own tolerations unknown",
      {{"pod", own->pod}, {"error", own->unknown_why},
       {"next", "refuse every NoExecute taint a hook publishes (a 403: render the RBAC again with `nodehook rbac`)"}});
  return own;
}

// The probes, /metrics and the admin endpoint, up before the waits so those are visible. Leaves
// `*health` null when both addresses are empty; false after logging why they cannot be served.
bool StartLocalEndpoints(const Config& config, std::unique_ptr<HealthService>* health) {
  LocalEndpointsConfig endpoints{config.tuning.health_address, config.tuning.admin_address,
                                 config.tuning.admin_token_file, std::chrono::seconds(config.tuning.health_stale_seconds),
                                 config.tuning.objects_endpoint};
  if (endpoints.health_address.empty() && endpoints.admin_address.empty()) return true;
  auto started = HealthService::Start(endpoints);
  if (!started.ok()) {
    Log(LogLevel::kError, "cannot serve local endpoints",
        {{"health_address", endpoints.health_address}, {"admin_address", endpoints.admin_address},
         {"error", started.status().ToString()}, {"next", "exit 1"}});
    return false;
  }
  *health = std::move(started).value();
  (*health)->SetWaiting("state lock " + config.state_file);
  return true;
}

// What the agent needs besides the config: the store's retry cadence, the election's identity
// and the agent pods (waited for until `stop`).
AgentOptions AgentOptionsFor(const Config& config, const PodEnvironment& pod, KubeClient& client,
                             StoreHealth& store_health, HealthService* health, const CancelToken& stop) {
  AgentOptions options;
  options.store_retry_delay = [&store_health] { return store_health.RetryDelay(); };
  if (HasSingletonResources(config)) options.election = ElectionOptionsFor(config, pod.pod_uid);
  if (health) health->SetWaiting("own pod");
  options.agent_pods = AgentPodsFor(config, pod, client, stop);
  if (pod.KnowsPod()) {
    options.self_pod = pod.PodKey();  // a rollout's drain never evicts it
    auto older = std::make_shared<OlderAgentPods>(client, pod.pod_namespace, pod.pod_name);
    options.pods_on_other_revisions = [older] { return older->Find(); };
  }
  options.own_tolerations = OwnTolerationsFor(config, pod, client, stop);
  return options;
}

// The state's Events and the probes follow the agent while it runs, and let go of it before it goes.
void RunUntilSignal(Agent& agent, RunState& state, HealthService* health, const CancelToken& stop) {
  state.AttachAgent(agent);
  if (health) health->Attach(&agent, [&state] { return state.health.ReadinessProblem(); });
  agent.Run(stop);
  if (health) health->Detach();
  state.DetachAgent();
}

}  // namespace

// Before anything logs (the orphan reaper does): every line in the configured format.
void ConfigureProcess(const Config& config) {
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.tuning.log_level, &level);
  SetLogLevel(level);
  LogFormat format = LogFormat::kLogfmt;
  ParseLogFormat(config.tuning.log_format, &format);
  SetLogFormat(format);
  // Two arenas serve a dozen threads well; one each would keep megabytes of RSS per thread.
  LimitHeapArenas(2);
}

// The API connection and, for cluster-singleton resources, the Lease's namespace (into
// `config`): both known before any waiting, or nullopt after logging why.
std::optional<TransportConfig> Connect(Config& config, const PodEnvironment& pod) {
  auto connection = ConnectionFor(config);
  if (!connection.ok()) {
    Log(LogLevel::kError, "cannot configure the API connection",
        {{"error", connection.status().ToString()}, {"next", "exit 1"}});
    return std::nullopt;
  }
  if (UsesLeases(config)) {
    auto lease_namespace = ResolveLeaseNamespace(config, pod.pod_namespace, kServiceAccountNamespaceFile);
    if (!lease_namespace.ok()) {
      Log(LogLevel::kError, HasSingletonResources(config) ? "cannot elect a singleton leader" : "lease namespace unknown",
          {{"error", lease_namespace.status().ToString()}, {"next", "exit 1"}});
      return std::nullopt;
    }
    config.tuning.lease_namespace = *lease_namespace;
  }
  return std::move(connection).value();
}

Status CheckConnection(const Config& config) { return ConnectionFor(config).status(); }

// Each step wires its own piece and logs why it could not; the pieces go in reverse order.
bool ReadyConditionsKept(const Config& config, KubeClient& client, const CancelToken& stop) {
  Status checked = CheckReadyConditionCrds(client, config, stop, MonotonicClock::Instance());
  if (checked.ok() || stop.cancelled()) return checked.ok();
  Log(LogLevel::kError, "config refused", {{"error", checked.ToString()}, {"next", "exit 2"}});
  return false;
}

int RunAgent(const Config& given, const PodEnvironment& pod) {
  Config config = given;  // the Lease's namespace and the hook work directory are resolved below
  ConfigureProcess(config);
  // First, before any library starts threads: they inherit the blocked signal mask, so only
  // the watcher thread ever sees SIGINT/SIGTERM.
  OrphanReaper orphans;  // before any hook runs: a daemon one leaves behind is ours to reap
  SignalWatcher signals;
  const CancelToken& stop = signals.stop();
  RegisterProcessMetrics(DefaultMetrics(), NODEHOOK_VERSION);

  std::optional<TransportConfig> connection = Connect(config, pod);
  if (!connection) return 1;
  std::unique_ptr<HealthService> health;
  if (!StartLocalEndpoints(config, &health)) return 1;
  int exit_code = 1;
  std::unique_ptr<RunState> state = OpenRunState(&config, stop, &exit_code);
  if (!state) return exit_code;
  RestKubeClient client(NewCpprestTransport(std::move(*connection)),
                        ObjectLimits{config.tuning.max_object_depth, static_cast<size_t>(config.tuning.max_object_bytes)},
                        &DefaultMetrics());
  // The writer of the ready conditions checks their CRDs: an agent, or else the steward.
  if (config.tuning.cross_node_writes != "steward" && !ReadyConditionsKept(config, client, stop)) {
    return stop.cancelled() ? 0 : 2;
  }
  ProcessRunner runner;
  signals.OnSecondSignal([&runner] { runner.KillAllNow(); });
  AgentOptions options = AgentOptionsFor(config, pod, client, state->health, health.get(), stop);
  if (stop.cancelled()) return 0;
  Agent agent(config, client, state->store, state->store, runner, SystemClock::Instance(), std::move(options));
  RunUntilSignal(agent, *state, health.get(), stop);
  // Nothing may touch the runner once it is gone; until the process exits, a second signal
  // still exits at once.
  signals.OnSecondSignal(nullptr);
  return 0;
}


}  // namespace nodehook
