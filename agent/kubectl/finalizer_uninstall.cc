#include "agent/kubectl/finalizer_uninstall.h"

#include <algorithm>

#include "agent/kubectl/agent_stand_down.h"
#include "agent/kubectl/cordon_release.h"
#include "agent/kubectl/finalizer_release.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {
namespace {

constexpr const char* kWhat = "kubectl nodehook release-finalizers";
constexpr const char* kNoDeleteHook =
    "No delete hook runs for the objects released: what the delete hooks would have done on the nodes is not done.";

std::string Scope(const ResourceRef& r) {
  return r.Id() + (r.namespace_name.empty() ? " (all namespaces)" : " (namespace " + r.namespace_name + ")");
}

// Whether the release may go on: the agents were stopped (--stop-agents), or none runs. A
// running agent puts finalizers back as they are removed.
bool AgentsStopped(KubeClient& client, const UninstallOptions& options, Clock& clock, std::ostream& out,
                   std::ostream& err) {
  const char* nothing = "Nothing was released.\n";
  if (!options.stop_agents.empty()) {
    auto slash = options.stop_agents.find('/');
    StandDownOptions stand_down{options.stop_agents.substr(0, slash), options.stop_agents.substr(slash + 1),
                                options.stop_timeout};
    // Every answer's Date sets it (none with a test's fake client): a pod's grace ends by the server's clock.
    stand_down.server_offset = [] { return Duration(ApiServerClock().offset_ms()); };
    Status stopped = StandDownAgents(client, stand_down, clock, out);
    if (stopped.ok()) return true;
    err << kWhat << ": " << stopped.message() << "\n" << nothing;
    return false;
  }
  Result<std::vector<std::string>> running = RunningAgents(client, kAgentPodsSelector);
  if (!running.ok()) {
    // Someone allowed to patch the objects but not to list pods: say what was not checked.
    err << kWhat << ": warning: cannot tell whether agents still run (" << running.status().message()
        << "); stop them first, or their finalizers come back\n";
    return true;
  }
  if (running->empty()) return true;
  err << kWhat << ": agents still run, and would put finalizers back as they are removed:\n";
  for (const std::string& pod : *running) err << "  " << pod << "\n";
  err << "Stop them first: run this again with --stop-agents NAMESPACE/DAEMONSET (it deletes the DaemonSet and "
         "waits for its pods), or delete the DaemonSet yourself and wait for its pods to be gone.\n"
      << nothing;
  return false;
}

}  // namespace

void AddToUninstall(const Config& config, UninstallScope* scope) {
  for (const WatchedResource& r : config.resources) {
    if (r.rollout && r.rollout->Cordons()) scope->cordoning.insert(RolloutIdOf(r.ref));
    bool known = std::any_of(scope->resources.begin(), scope->resources.end(), [&](const ResourceRef& x) {
      return x.group == r.ref.group && x.plural == r.ref.plural && x.namespace_name == r.ref.namespace_name;
    });
    if (!known) scope->resources.push_back(r.ref);
  }
}

void DescribeUninstall(const UninstallScope& scope, const UninstallOptions& options, std::ostream& err) {
  if (!options.stop_agents.empty()) {
    err << kWhat << " deletes DaemonSet " << options.stop_agents << " and waits for its pods to be gone, then\n";
  }
  err << kWhat << " removes every nodehook.io/ finalizer from every object of:\n";
  for (const ResourceRef& r : scope.resources) err << "  " << Scope(r) << "\n";
  if (!scope.cordoning.empty()) {
    err << "and uncordons the nodes its rollouts cordoned for work still going on"
        << (options.uncordon_failed ? " or kept cordoned after a failure.\n" : " (not those kept after a failure).\n");
  }
  err << kNoDeleteHook << "\nRun it again with --yes to do it. Nothing was changed.\n";
}

int Uninstall(KubeClient& client, const UninstallScope& scope, const UninstallOptions& options, Clock& clock,
              std::ostream& out, std::ostream& err) {
  out << kNoDeleteHook << "\n";
  if (!AgentsStopped(client, options, clock, out, err)) return options.stop_agents.empty() ? 2 : 1;
  ReleaseTotals totals = ReleaseFinalizers(client, scope.resources, out, err);
  out << "released " << totals.finalizers << " finalizer" << (totals.finalizers == 1 ? "" : "s") << " from "
      << totals.released_objects << " of " << totals.objects << " objects";
  if (totals.failures > 0) out << "; " << totals.failures << " failed (see above)";
  out << "\n";
  int failures = totals.failures;
  if (!scope.cordoning.empty()) {
    CordonReleaseTotals cordons = ReleaseCordons(client, scope.cordoning, options.uncordon_failed, out, err);
    out << "gave back " << cordons.unmarked << " of " << cordons.marks << " node cordon"
        << (cordons.marks == 1 ? "" : "s") << " (" << cordons.uncordoned << " uncordoned)";
    if (cordons.kept_failed > 0) out << "; kept " << cordons.kept_failed << " of failed nodes";
    if (cordons.failures > 0) out << "; " << cordons.failures << " failed (see above)";
    out << "\n";
    failures += cordons.failures;
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace nodehook
