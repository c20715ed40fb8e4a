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
  }
}

}  // namespace

int RunCheckConfig(const std::string& path, const ConfigSources& sources, std::ostream& out, std::ostream& err,
                   const ConnectionCheck& check_connection) {
  ConfigResult result = LoadConfigFile(path, sources);
  if (!result.ok()) {
    for (const ConfigError& e : result.errors) err << e.ToString(path) << "\n";
    return 2;
  }
  Status connection = check_connection ? check_connection(result.config) : Status::Ok();
  if (!connection.ok()) {
    err << path << ": api: " << connection.message() << "\n";
    return 2;
  }
  PrintSummary(path, result.config, out);
  return 0;
}

}  // namespace nodehook
