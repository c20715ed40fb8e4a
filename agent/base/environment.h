// The process environment behind one seam: an EnvLookup the commands are given, so tests pass a
// map instead of calling setenv; and the pod's downward API (NODE_NAME, POD_NAME, POD_NAMESPACE,
// POD_UID) read once, at start, into a PodEnvironment that is passed down.
// Value types and functions; ProcessEnvironment's lookups are as thread-safe as getenv (nothing
// here calls setenv).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace nodehook {

// The value of an environment variable, or nullopt when it is not set (set but empty: "").
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// This process's environment (getenv).
EnvLookup ProcessEnvironment();
// A fixed environment, for tests and for a map already read (ConfigSources::env).
EnvLookup MapEnvironment(std::map<std::string, std::string> values);

// What the DaemonSet's downward API tells the agent about its pod. "" when not set (off the
// cluster: a test, a demo) or set empty: every reader treats the two alike.
struct PodEnvironment {
  std::string node_name;      // NODE_NAME
  std::string pod_name;       // POD_NAME
  std::string pod_namespace;  // POD_NAMESPACE
  std::string pod_uid;        // POD_UID

  // Both the pod's namespace and name are known: it can be read from the API.
  bool KnowsPod() const { return !pod_namespace.empty() && !pod_name.empty(); }
  // "namespace/name".
  std::string PodKey() const { return pod_namespace + "/" + pod_name; }
};

PodEnvironment ReadPodEnvironment(const EnvLookup& env = ProcessEnvironment());

}  // namespace nodehook
