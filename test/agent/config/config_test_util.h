// Small helpers shared by the config tests.
#pragma once

#include <string>

#include "agent/config/config.h"

namespace nodehook {

// The first error at `path`, or nullptr.
inline const ConfigError* FindError(const ConfigResult& result, const std::string& path) {
  for (const ConfigError& e : result.errors) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

inline std::string AllErrors(const ConfigResult& result) {
  std::string text;
  for (const ConfigError& e : result.errors) text += e.ToString("config.json") + "\n";
  return text;
}

// A config with one resource and no node_name (give NODE_NAME); `extra` adds top-level members.
inline std::string MinimalConfig(const std::string& extra = "") {
  return R"({"state_file": "/s.db",
             "resources": [{"version": "v1", "plural": "widgets", "hooks": {"create": {"argv": ["/h"]}}}])" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

inline ConfigSources Sources(std::map<std::string, std::string> env,
                             std::map<std::string, std::string> flags = {}) {
  ConfigSources sources;
  sources.env = std::move(env);
  sources.flags = std::move(flags);
  return sources;
}

}  // namespace nodehook
