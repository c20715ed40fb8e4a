#include "agent/base/environment.h"

#include <cstdlib>
#include <utility>

namespace nodehook {

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

EnvLookup MapEnvironment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

PodEnvironment ReadPodEnvironment(const EnvLookup& env) {
  auto read = [&env](const char* name) { return env(name).value_or(""); };
  PodEnvironment pod;
  pod.node_name = read("NODE_NAME");
  pod.pod_name = read("POD_NAME");
  pod.pod_namespace = read("POD_NAMESPACE");
  pod.pod_uid = read("POD_UID");
  return pod;
}

}  // namespace nodehook
