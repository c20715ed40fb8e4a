// The `check-config` command, error formatting and reading the process environment.
#include <ostream>

#include "agent/config/config.h"
#include "agent/config/hook_programs.h"

extern char** environ;  // POSIX; not declared by any standard C++ header

namespace nodehook {

std::string ConfigError::ToString(const std::string& file) const {
  std::string text = file;
  if (line > 0) text += ":" + std::to_string(line);
  text += ": ";
  if (!path.empty()) text += path + ": ";
  return text + message;
}

ConfigSources EnvironmentSources() {
  ConfigSources sources;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string pair(*entry);
    size_t eq = pair.find('=');
    if (eq != std::string::npos) sources.env[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  sources.check_program = ProgramProblem;
  return sources;
}

namespace {

// "widgets.example.com/v1"; written here rather than calling ResourceRef::Id() so this library
// does not need the kube library just to print a summary.
std::string ResourceName(const ResourceRef& ref) {
  return ref.plural + (ref.group.empty() ? "" : "." + ref.group) + "/" + ref.version;
}

std::string Count(const NodeCount& count) {
  return std::to_string(count.value) + (count.percent ? "%" : "");
}

// "max_nodes 10%, canary_nodes 1, soak 60s, verify /v, max_failed_nodes 2, gates create update,
// window 0 22 * * 1-5 for 14400s in Europe/Berlin"
void PrintRollout(const RolloutPolicy& p, std::ostream& out) {
  out << "    rollout: max_nodes " << Count(p.max_nodes) << ", canary_nodes " << p.canary_nodes << ", soak "
      << p.soak.count() << "s";
  if (p.verify && !p.verify->argv.empty()) out << ", verify " << p.verify->argv[0];
  out << ", max_failed_nodes " << Count(p.max_failed_nodes) << ", gates";
  for (const std::string& reason : p.reasons) out << " " << reason;
  if (p.windows.empty()) out << ", always open";
  for (const RolloutWindow& w : p.windows) {
    out << ", window " << w.cron << " for " << w.duration.count() << "s in " << w.time_zone;
  }
  out << "\n";
  if (!p.HasNodeSteps()) return;
  out << "    node steps:";
  if (p.Cordons()) out << " cordon,";
  if (p.drain) {
    out << " drain (timeout " << p.drain->timeout.count() << "s"
        << (p.drain->pod_selector.empty() ? "" : ", pods " + p.drain->pod_selector)
        << (p.drain->grace_period_seconds >= 0 ? ", grace " + std::to_string(p.drain->grace_period_seconds) + "s" : "")
        << (p.drain->force ? ", force" : "") << (p.drain->delete_emptydir_data ? ", delete emptyDir data" : "")
        << "),";
  }
  out << " hook,";
  if (p.reboot) out << " reboot when asked (" << p.reboot->argv[0] << ", timeout " << p.reboot->timeout.count() << "s),";
  if (p.verify) out << " verify,";
  if (p.Cordons()) out << " uncordon; on failure " << OnFailureName(p.on_failure);
  out << "\n";
}

void PrintSummary(const std::string& path, const Config& config, std::ostream& out) {
  out << path << ": valid\n";
  out << "node: " << config.node_name << "\n";
  out << "state file: " << config.state_file << "\n";
  out << "api: " << (config.api.in_cluster ? "in cluster" : "kubeconfig " + config.api.kubeconfig) << "\n";
  out << "resources:\n";
  for (const WatchedResource& r : config.resources) {
    out << "  " << ResourceName(r.ref) << " in "
        << (r.ref.namespace_name.empty() ? "all namespaces" : "namespace " + r.ref.namespace_name);
    if (!r.ref.label_selector.empty()) out << " with labels " << r.ref.label_selector;
    if (!r.ref.field_selector.empty()) out << " with fields " << r.ref.field_selector;
    out << "\n";
    if (!r.ignored_paths.empty()) {
      out << "    ignoring:";
      for (const std::string& ignored : r.ignored_paths) out << " " << ignored;
      out << "\n";
    }
    for (const auto& [reason, hook] : r.hooks) {
      out << "    " << reason << ":";
      for (const std::string& arg : hook.argv) out << " " << arg;
      out << " (timeout " << hook.timeout.count() << "s";
      if (reason == kReasonCheck) out << ", every " << hook.interval_seconds << "s +-" << hook.jitter_percent << "%";
      if (reason == kReasonSnapshot && hook.run_on_start) out << ", also on start";
      out << ")\n";
    }
    if (r.rollout) PrintRollout(*r.rollout, out);
  }
}

}  // namespace

ConfigSources OfflineSources(ConfigSources sources) {
  sources.check_program = nullptr;
  auto node = sources.env.find("NODE_NAME");
  if (node == sources.env.end() || node->second.empty()) sources.env["NODE_NAME"] = kOfflineNodeName;
  return sources;
}

int RunCheckConfig(const std::string& path, const ConfigSources& sources, std::ostream& out, std::ostream& err,
                   const ConnectionCheck& check_connection) {
  const std::string hint = path + ": to check the file alone, off the node (no hook programs, no credentials): "
                                  "nodehook check-config --offline " + path + "\n";
  bool on_node = static_cast<bool>(sources.check_program);
  ConfigResult result = LoadConfigFile(path, sources);
  if (!result.ok()) {
    for (const ConfigError& e : result.errors) err << e.ToString(path) << "\n";
    // Some problems gone when checked offline: they are about this machine, not the file.
    if (on_node && LoadConfigFile(path, OfflineSources(sources)).errors.size() < result.errors.size()) err << hint;
    return 2;
  }
  Status connection = check_connection ? check_connection(result.config) : Status::Ok();
  if (!connection.ok()) {
    err << path << ": api: " << connection.message() << "\n";
    err << hint;
    return 2;
  }
  PrintSummary(path, result.config, out);
  return 0;
}

}  // namespace nodehook
