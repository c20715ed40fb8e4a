#include "agent/app/rollout_command.h"

#include <cctype>
#include <thread>

#include "agent/kubectl/fleet_survey.h"
#include "agent/kubectl/fleet_wait.h"
#include "agent/kubectl/rollout_report.h"
#include "agent/kube/credentials/connection_source.h"
#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/transport/server_clock.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook";

std::string AgentsNamespace(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args) {
  return args.agents_namespace.empty() ? fleet_args.target.namespace_name : args.agents_namespace;
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::function<int64_t()> ServerNow(const RolloutDeps& deps) {
  if (deps.server_now_ms) return deps.server_now_ms;
  const Clock* clock = deps.clock;
  return [clock] { return ToMillis(clock->Now()); };
}

int Fail(std::ostream& err, const Status& status) {
  err << kWhat << ": " << status.message() << "\n";
  return 1;
}

// pause / resume: the only writes.
int Steer(RolloutCluster& cluster, const RolloutView& view, bool pause, bool stop_nodes, std::ostream& out,
          std::ostream& err) {
  std::string annotations =
      pause ? Quoted(kRolloutPausedAnnotation) + ":" + Quoted(stop_nodes ? kRolloutStopNodes : "true")
            : Quoted(kRolloutPausedAnnotation) + ":null," + Quoted(kRolloutResumeAnnotation) + ":" + Quoted(view.state.state);
  std::string body = "{\"metadata\":{\"annotations\":{" + annotations + "}}}";
  Status patched = cluster.MergePatchObject(SpecObject(view.spec, view.spec.version), body);
  if (!patched.ok()) {
    err << kWhat << ": patching " << view.Describe() << ": " << patched.message() << "\n";
    return 1;
  }
  out << view.Describe()
      << (!pause      ? " resumed at state " + view.state.state.substr(0, 12)
          : stop_nodes ? " paused; the nodes inside stop before their hook succeeds and give their cordon back"
                       : " paused; the nodes inside finish their work")
      << "\n";
  return 0;
}

// One look for `wait`: the verdict, or why there is none this time (the API refused, ...).
using Look = std::function<Result<WaitVerdict>()>;

int PollUntilDone(const Look& look, Duration timeout, const RolloutCommandArgs& args, const RolloutDeps& deps,
                  std::ostream& out) {
  const TimePoint deadline = deps.clock->Now() + timeout;
  Result<WaitVerdict> last = Status(StatusCode::kUnavailable, "not looked yet");
  while (true) {
    last = look();
    if (last.ok() && last->kind == WaitVerdict::Kind::kDone) {
      out << last->summary << "\n";
      return 0;
    }
    if (last.ok() && last->kind == WaitVerdict::Kind::kHalted) {
      out << last->summary << "\n" << FormatBlockers(*last);
      return 5;
    }
    TimePoint now = deps.clock->Now();
    if (now >= deadline) break;
    deps.sleep(std::min<Duration>(Duration(args.poll_ms), deadline - now));
  }
  out << "timed out after " << args.timeout << ": ";
  if (last.ok()) {
    out << last->summary << "\n" << FormatBlockers(*last);
  } else {
    out << last.status().message() << "\n";
  }
  return 4;
}

// The spec's group and version when its resource has no rollout Leases: spelled, discovered
// from the group, or else from what the agents list under that name.
Result<ObjectSpec> ResolveWithoutLeases(RolloutCluster& cluster, FleetSource& fleet, const ObjectSpec& spec,
                                        int parallel) {
  if (spec.group_given && !spec.version.empty()) return spec;
  if (spec.group_given) {
    Result<std::string> version = cluster.PreferredVersion(spec.group);
    if (!version.ok()) return version.status();
    ObjectSpec out = spec;
    out.version = *version;
    return out;
  }
  std::string path = "/v1/objects?name=" + spec.name + (spec.namespace_name.empty() ? "" : "&namespace=" + spec.namespace_name);
  Result<std::vector<NodeAnswer>> answers = Survey(fleet, path, parallel);
  if (!answers.ok()) return answers.status();
  for (const NodeAnswer& a : *answers) {
    for (const ObjectView& o : a.objects.objects) {
      if (MatchesResource(spec, o.resource, nullptr)) return ResolvedSpec(spec, o.resource);
    }
  }
  return NotFoundError("no agent lists " + spec.Describe() + ", so its group is unknown: spell RESOURCE.GROUP");
}

// One survey round: every agent's answer about `uid`, judged against `live_rv` (nullopt: gone).
Result<WaitVerdict> SurveyLook(FleetSource& fleet, const std::string& uid, const std::optional<std::string>& live_rv,
                               int parallel, const std::string& agents_namespace) {
  Result<std::vector<NodeAnswer>> answers = Survey(fleet, "/v1/objects?uid=" + uid, parallel);
  if (!answers.ok()) return answers.status();
  if (answers->empty()) return UnavailableError("no agent pods in namespace " + agents_namespace);
  return JudgeSurveyWait(*answers, uid, live_rv);
}

int Wait(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args, const RolloutDeps& deps,
         RolloutCluster& cluster, const ObjectSpec& spec, std::ostream& out, std::ostream& err) {
  Result<Duration> timeout = ParseWaitDuration(args.timeout);
  if (!timeout.ok()) {
    err << kWhat << ": --timeout: " << timeout.status().message() << "\n";
    return 2;
  }
  Result<std::vector<RolloutLease>> leases = cluster.ListRolloutLeases();
  if (!leases.ok()) return Fail(err, leases.status());
  std::string resource_id;
  Result<std::vector<RolloutLease>> mine = ResourceLeases(*leases, spec, &resource_id);
  if (!mine.ok() && mine.status().code() != StatusCode::kNotFound) return Fail(err, mine.status());
  FleetCommandArgs agents = fleet_args;
  agents.target.namespace_name = AgentsNamespace(fleet_args, args);
  Result<std::unique_ptr<FleetSource>> fleet =
      deps.fleet ? deps.fleet(agents) : Result<std::unique_ptr<FleetSource>>(UnavailableError("no agents to ask"));
  const int parallel = fleet_args.parallel;
  const std::string& agents_ns = agents.target.namespace_name;

  if (mine.ok()) {
    Result<RolloutView> first = ReadRollout(cluster, spec, ServerNow(deps), deps.windows);
    if (!first.ok()) return Fail(err, first.status());
    const std::string uid = first->object.meta.uid;
    Look look = [&]() -> Result<WaitVerdict> {
      Result<RolloutView> view = ReadRollout(cluster, spec, ServerNow(deps), deps.windows);
      if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
        WaitVerdict gone;
        gone.kind = WaitVerdict::Kind::kDone;
        gone.summary = spec.Describe() + " was deleted: " + view.status().message();
        return gone;
      }
      if (!view.ok()) return view.status();
      WaitVerdict leased = JudgeRolloutWait(*view);
      if (leased.kind != WaitVerdict::Kind::kPending || !fleet.ok() || view->object.meta.uid != uid) return leased;
      // Node Leases get results for the policy's gated reasons only (a create with `reasons:
      // [update]`, or a reason without a hook, writes none): the agents' own word settles those.
      Result<WaitVerdict> asked = SurveyLook(**fleet, uid, view->object.meta.resource_version, parallel, agents_ns);
      return asked.ok() && asked->kind == WaitVerdict::Kind::kDone ? *asked : leased;
    };
    return PollUntilDone(look, *timeout, args, deps, out);
  }

  // No rollout policy: ask the agents.
  if (!fleet.ok()) {
    err << kWhat << ": " << fleet.status().message() << "\n";
    return 2;
  }
  Result<ObjectSpec> resolved = ResolveWithoutLeases(cluster, **fleet, spec, parallel);
  if (!resolved.ok()) return Fail(err, resolved.status());
  const ObjectRef ref = SpecObject(*resolved, resolved->version);
  Result<KubeObject> object = cluster.GetObject(ref);
  if (!object.ok()) {
    return Fail(err, object.status().code() == StatusCode::kNotFound ? NotFoundError(spec.Describe() + " not found")
                                                                     : object.status());
  }
  const std::string uid = object->meta.uid;
  Look look = [&]() -> Result<WaitVerdict> {
    Result<KubeObject> live = cluster.GetObject(ref);
    if (!live.ok() && live.status().code() != StatusCode::kNotFound) return live.status();
    std::optional<std::string> rv;
    if (live.ok() && live->meta.uid == uid) rv = live->meta.resource_version;  // a new object of that name: not ours
    return SurveyLook(**fleet, uid, rv, parallel, agents_ns);
  };
  return PollUntilDone(look, *timeout, args, deps, out);
}

}  // namespace

bool IsRolloutAction(const std::string& action) {
  return action == "rollout-status" || action == "rollout-plan" || action == "rollout-pause" ||
         action == "rollout-resume" || action == "wait";
}

void AddRolloutCommands(CLI::App* fleet, FleetCommandArgs* fleet_args, RolloutCommandArgs* args) {
  auto object_options = [args](CLI::App* sub) {
    sub->fallthrough();
    sub->add_option("object", args->object, "RESOURCE[.GROUP]/NAME, e.g. widgets.example.com/w1")->required();
    sub->add_option("--namespace,-n", args->object_namespace, "the object's namespace (namespaced resources)");
    sub->add_option("--agents-namespace", args->agents_namespace,
                    "the agents' namespace, where the rollout Leases are (default: the fleet's, nodehook)");
  };
  CLI::App* rollout = fleet->add_subcommand("rollout", "A resource's rollout across the fleet, from its Leases");
  rollout->fallthrough();
  rollout->require_subcommand(1);
  auto action = [&](const char* name, const char* help) {
    CLI::App* sub = rollout->add_subcommand(name, help);
    object_options(sub);
    std::string chosen = std::string("rollout-") + name;
    sub->callback([fleet_args, chosen] { fleet_args->action = chosen; });
  };
  action("status", "Per node: done, running, verifying, soaking, failed, or waiting and why (read-only)");
  action("plan", "Dry run: the order nodes would go in (canaries first), in batches, and what blocks each now");
  action("pause", "Pause the object's rollout (annotation nodehook.io/rollout-paused); nodes inside finish");
  rollout->get_subcommand("pause")->add_flag(
      "--stop-nodes", args->stop_nodes,
      "stop the nodes inside too: those before their hook's success give their cordon back (value stop-nodes)");
  action("resume", "Resume it, and let a halted state continue (annotation nodehook.io/rollout-resume)");
  CLI::App* wait = fleet->add_subcommand(
      "wait", "Exit 0 once every node that handles OBJECT has handled its current state (4: timeout, 5: halted)");
  object_options(wait);
  wait->add_option("--timeout", args->timeout, "how long to wait, e.g. 90s, 5m")->capture_default_str();
  wait->add_option("--poll-ms", args->poll_ms, "milliseconds between looks")->check(CLI::Range(100, 60000))->capture_default_str();
  wait->callback([fleet_args] { fleet_args->action = "wait"; });
}

Result<Duration> ParseWaitDuration(const std::string& text) {
  if (text.empty()) return InvalidError("expected a duration like 90s or 5m, got \"\"");
  int64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && n < 100000000) {
      n = n * 10 + (text[i++] - '0');
    }
    if (i == start) return InvalidError("expected a duration like 90s or 5m, got \"" + text + "\"");
    char unit = i < text.size() ? text[i++] : 's';
    if (unit == 'h') {
      total += n * 3600;
    } else if (unit == 'm') {
      total += n * 60;
    } else if (unit == 's') {
      total += n;
    } else {
      return InvalidError("expected a duration like 90s or 5m (units h, m, s), got \"" + text + "\"");
    }
  }
  return Duration(total * 1000);
}

RolloutDeps KubeconfigRolloutDeps() {
  RolloutDeps deps;
  deps.cluster = [](const FleetCommandArgs& args,
                    const std::string& agents_namespace) -> Result<std::unique_ptr<RolloutCluster>> {
    Result<TransportConfig> connection = LoadConnection(args.kubeconfig, WithoutKubeconfig::kUserKubeconfig);
    if (!connection.ok()) return connection.status();
    connection->connect_timeout_seconds = args.timeout_seconds;
    connection->idle_timeout_seconds = args.timeout_seconds;
    return NewKubeRolloutCluster(std::make_unique<RestKubeClient>(NewCpprestTransport(*connection)),
                                 NewCpprestTransport(*connection), agents_namespace);
  };
  deps.fleet = KubeconfigFleetSource;
  deps.clock = &SystemClock::Instance();
  deps.server_now_ms = [] { return ApiServerClock().NowMs(); };  // every answer's Date sets it
  deps.sleep = [](Duration d) { std::this_thread::sleep_for(d); };
  return deps;
}

int RunRolloutCommand(const FleetCommandArgs& fleet_args, const RolloutCommandArgs& args, const RolloutDeps& deps,
                      std::ostream& out, std::ostream& err) {
  Result<ObjectSpec> spec = ParseObjectSpec(args.object, args.object_namespace);
  if (!spec.ok()) {
    err << kWhat << ": " << spec.status().message() << "\n";
    return 2;
  }
  Result<std::unique_ptr<RolloutCluster>> cluster = deps.cluster(fleet_args, AgentsNamespace(fleet_args, args));
  if (!cluster.ok()) {
    err << kWhat << ": " << cluster.status().message() << "\n";
    return 2;
  }
  const std::string& action = fleet_args.action;
  if (action == "wait") return Wait(fleet_args, args, deps, **cluster, *spec, out, err);
  Result<RolloutView> view = ReadRollout(**cluster, *spec, ServerNow(deps), deps.windows);
  if (!view.ok()) return Fail(err, view.status());
  if (action == "rollout-status") {
    out << FormatRolloutStatus(*view);
  } else if (action == "rollout-plan") {
    out << FormatRolloutPlan(*view);
  } else {
    return Steer(**cluster, *view, action == "rollout-pause", args.stop_nodes, out, err);
  }
  return 0;
}

}  // namespace nodehook
