// Small helpers shared by the config tests: the sources and config texts they parse, and parsing
// that expects a clean config, exactly one error, or an error at a path (each failing the test with
// every error shown otherwise).
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agent/config/config.h"

namespace nodehook {

// The first error at `path`, or nullptr.
inline const ConfigError* FindError(const ConfigResult& result, const std::string& path) {
  for (const ConfigError& e : result.errors) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

// The messages of the errors at `path`, in order.
inline std::vector<std::string> ErrorsAt(const ConfigResult& result, const std::string& path) {
  std::vector<std::string> out;
  for (const ConfigError& e : result.errors) {
    if (e.path == path) out.push_back(e.message);
  }
  return out;
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

// A config whose one resource (v1 "w", on line 3) has `members`, its hooks among them, from line 4
// on; `top` adds top-level members after "resources".
inline std::string OneResource(const std::string& members, const std::string& top = "") {
  return "{\"state_file\": \"/s\",\n\"resources\": [\n{\"version\": \"v1\", \"plural\": \"w\",\n" + members + "}]" +
         (top.empty() ? "" : ",\n" + top) + "}";
}

// Create and update hooks: what a rollout gates by default.
inline const char* const kCreateUpdate = R"("create": {"argv": ["/h"]}, "update": {"argv": ["/h"]})";

// A config whose one resource has `hooks` and `rollout`: "rollout" is on line 5 and `rollout`'s own
// lines follow. `members` go after the resource's plural, on line 3.
inline std::string WithRollout(const std::string& rollout, const std::string& hooks = kCreateUpdate,
                               const std::string& members = "") {
  return "{\"state_file\": \"/s\",\n\"resources\": [\n{\"version\": \"v1\", \"plural\": \"w\"" + members +
         ",\n\"hooks\": {" + hooks + "},\n\"rollout\": " + rollout + "}]}";
}

inline ConfigSources Sources(std::map<std::string, std::string> env,
                             std::map<std::string, std::string> flags = {}) {
  ConfigSources sources;
  sources.env = std::move(env);
  sources.flags = std::move(flags);
  return sources;
}

// The tuning knobs that tests of the sources set together, as one text to compare (and to show).
inline std::string CoreTuning(const Tuning& t) {
  return "log_level " + t.log_level + ", workers " + std::to_string(t.workers) + ", watch_timeout_seconds " +
         std::to_string(t.watch_timeout_seconds) + ", retry_base_seconds " + std::to_string(t.retry_base_seconds) +
         ", retry_max_seconds " + std::to_string(t.retry_max_seconds) + ", hook_work_dir \"" + t.hook_work_dir + "\"";
}

// The node name a config without node_name needs, and nothing else.
inline const ConfigSources kNode = Sources({{"NODE_NAME", "n"}});

// `text` parsed from `sources`; it must have no error.
inline Config MustParse(const std::string& text, const ConfigSources& sources = kNode) {
  ConfigResult result = ParseConfig(text, sources);
  INFO(AllErrors(result));
  REQUIRE(result.ok());
  return result.config;
}

// The one error of `text` parsed from `sources`; there must be exactly one.
inline ConfigError OnlyErrorIn(const std::string& text, const ConfigSources& sources = kNode) {
  ConfigResult result = ParseConfig(text, sources);
  INFO(text << "\n" << AllErrors(result));
  REQUIRE(result.errors.size() == 1);
  return result.errors[0];
}

// The first error at `path` of `text` parsed from `sources`; there must be one.
inline ConfigError ErrorAt(const std::string& text, const std::string& path, const ConfigSources& sources = kNode) {
  ConfigResult result = ParseConfig(text, sources);
  INFO(text << "\n" << AllErrors(result));
  const ConfigError* e = FindError(result, path);
  REQUIRE(e != nullptr);
  return *e;
}

// The rollout policy of WithRollout(rollout, hooks), parsed from `sources` without an error.
inline RolloutPolicy ParsedRollout(const std::string& rollout, const std::string& hooks = kCreateUpdate,
                                   const ConfigSources& sources = kNode) {
  const Config c = MustParse(WithRollout(rollout, hooks), sources);
  REQUIRE(c.resources.at(0).rollout.has_value());
  return *c.resources.at(0).rollout;
}

// The one error of a rollout whose line 2 (the config's line 6) is `member`.
inline ConfigError RolloutError(const std::string& member, const std::string& hooks = kCreateUpdate,
                                const ConfigSources& sources = kNode) {
  return OnlyErrorIn(WithRollout("{\n" + member + "\n}", hooks), sources);
}

}  // namespace nodehook
