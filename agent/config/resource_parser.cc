#include "agent/config/resource_parser.h"

#include "agent/config/node_outputs_parser.h"
#include "agent/config/rollout_parser.h"
#include "agent/config/selector_template.h"

namespace nodehook {
namespace {

// Reads `key` when present; reports it as missing when `required`.
const rapidjson::Value* Member(const rapidjson::Value& object, const std::string& path, const char* key,
                               bool required, const std::string& expected, Diagnostics& diag) {
  const rapidjson::Value* value = FindMember(object, key);
  if (value == nullptr && required) diag.Error(ChildPath(path, key), "missing (expected " + expected + ")");
  return value;
}

bool IsDottedPath(const std::string& path) {
  return !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
}

// A label or field selector, which may name this node as {node} (expanded once node_name is known).
void ReadSelector(const rapidjson::Value& object, const std::string& path, const char* key, std::string* out,
                  Diagnostics& diag) {
  const rapidjson::Value* value = FindMember(object, key);
  if (value == nullptr) return;
  std::string key_path = ChildPath(path, key);
  if (!ReadString(*value, key_path, false, out, diag)) return;
  std::string problem = SelectorTemplateProblem(*out);
  if (!problem.empty()) {
    diag.Error(key_path, "expected a selector, optionally with {node} for this node's name, e.g. "
                         "\"example.com/node in ({node},all)\"; " + problem);
    out->clear();
  }
}

void ReadCheckTiming(const rapidjson::Value& value, const std::string& path, HookSpec* out, Diagnostics& diag) {
  if (auto* interval = Member(value, path, "interval_seconds", true,
                              "seconds between two checks of an object, at least 1, e.g. 300", diag)) {
    ReadIntInRange(*interval, ChildPath(path, "interval_seconds"), 1, kMaxCheckIntervalSeconds,
                   &out->interval_seconds, diag);
  }
  if (auto* jitter = FindMember(value, "jitter_percent")) {
    ReadIntInRange(*jitter, ChildPath(path, "jitter_percent"), 0, kMaxCheckJitterPercent, &out->jitter_percent, diag);
  }
}

}  // namespace

void ReadHook(const rapidjson::Value& value, const std::string& path, const std::string& reason, HookSpec* out,
              Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, HookKeys(reason), diag);
  if (reason == kReasonCheck) ReadCheckTiming(value, path, out, diag);
  auto* on_start = reason == kReasonSnapshot ? FindMember(value, "run_on_start") : nullptr;
  if (on_start) {
    ReadBool(*on_start, ChildPath(path, "run_on_start"), &out->run_on_start, diag);
  }
  if (auto* argv = Member(value, path, "argv", true, "the hook's program and arguments, e.g. [\"/hooks/run\"]", diag)) {
    std::string argv_path = ChildPath(path, "argv");
    // Absolute, so the program does not depend on the agent's PATH or working directory.
    if (ReadStringList(*argv, argv_path, false, &out->argv, diag) && out->argv[0][0] != '/') {
      diag.Error(ElementPath(argv_path, 0),
                 "expected an absolute path to the hook program, e.g. \"/hooks/run\", got \"" + out->argv[0] + "\"");
    }
  }
  if (auto* timeout = FindMember(value, "timeout_seconds")) {
    int seconds = 0;
    if (ReadIntInRange(*timeout, ChildPath(path, "timeout_seconds"), 1, kMaxHookTimeoutSeconds, &seconds, diag)) {
      out->timeout = std::chrono::seconds(seconds);
    }
  }
  if (auto* limit = FindMember(value, "max_retries")) {
    ReadIntInRange(*limit, ChildPath(path, "max_retries"), 1, kMaxHookRetries, &out->max_retries, diag);
  }
  if (auto* total = FindMember(value, "max_total_seconds")) {
    ReadIntInRange(*total, ChildPath(path, "max_total_seconds"), 1, kMaxHookTotalSeconds, &out->max_total_seconds,
                   diag);
  }
}

namespace {

void ReadHooks(const rapidjson::Value& value, const std::string& path, WatchedResource* out, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, HookReasons(), diag);
  for (const std::string& reason : HookReasons()) {
    if (const rapidjson::Value* hook = FindMember(value, reason.c_str())) {
      ReadHook(*hook, ChildPath(path, reason), reason, &out->hooks[reason], diag);
    }
  }
  if (out->hooks.empty()) diag.Error(path, "expected at least one of: " + JoinNames(HookReasons()));
}

// One agent in the cluster handles a singleton resource, with progress on the object itself: what
// is per node (targeting, per-node finalizers, per-node event logs, resume at a node's start)
// does not apply.
void CheckSingleton(const std::string& path, WatchedResource* out, Diagnostics& diag) {
  // (It keeps the one cluster-wide finalizer nodehook.io/singleton instead: finalizers/singleton_finalizer.h.)
  if (out->finalizer) diag.Error(path, "cannot be combined with \"finalizer\" (per-node finalizers)");
  if (!out->node_selector_path.empty()) {
    diag.Error(path, "cannot be combined with \"node_selector_path\" (node targeting)");
  }
  for (const char* reason : {kReasonResume, kReasonEvent}) {
    if (out->hooks.count(reason)) {
      diag.Error(path, std::string("a singleton resource takes only create, update and delete hooks, not \"") +
                           reason + "\"");
    }
  }
  // Writing the annotation must not look like a change of the object.
  out->ignored_paths.push_back(std::string("metadata.annotations.") + kSingletonHandledAnnotation);
}

}  // namespace

const std::vector<std::string>& HookReasons() {
  static const std::vector<std::string> reasons = {kReasonCreate, kReasonUpdate, kReasonDelete, kReasonResume,
                                                   kReasonEvent,  kReasonCheck,  kReasonSnapshot};
  return reasons;
}

const std::vector<std::string>& ResourceKeys() {
  static const std::vector<std::string> keys = {
      "group",  "version",   "plural",         "namespace", "label_selector", "field_selector", "ignored_paths",
      "node_selector_path", "finalizer", "success_events", "singleton", "hooks", "rollout", "node_outputs",
      "ready_condition"};
  return keys;
}

std::vector<std::string> HookKeys(const std::string& reason) {
  std::vector<std::string> keys = {"argv", "timeout_seconds", "max_retries", "max_total_seconds"};
  if (reason == kReasonCheck) keys.insert(keys.end(), {"interval_seconds", "jitter_percent"});
  if (reason == kReasonSnapshot) keys.emplace_back("run_on_start");
  return keys;
}

void ReadWatchedResource(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                         WatchedResource* out, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, ResourceKeys(), diag);
  ResourceRef& ref = out->ref;
  if (auto* group = FindMember(value, "group")) ReadString(*group, ChildPath(path, "group"), false, &ref.group, diag);
  if (auto* version = Member(value, path, "version", true, "a non-empty string, e.g. \"v1\"", diag)) {
    ReadString(*version, ChildPath(path, "version"), true, &ref.version, diag);
  }
  if (auto* plural = Member(value, path, "plural", true, "a non-empty string, e.g. \"widgets\"", diag)) {
    ReadString(*plural, ChildPath(path, "plural"), true, &ref.plural, diag);
  }
  if (auto* ns = FindMember(value, "namespace")) {
    ReadString(*ns, ChildPath(path, "namespace"), false, &ref.namespace_name, diag);
  }
  ReadSelector(value, path, "label_selector", &ref.label_selector, diag);
  ReadSelector(value, path, "field_selector", &ref.field_selector, diag);
  if (auto* ignored = FindMember(value, "ignored_paths")) {
    std::string list_path = ChildPath(path, "ignored_paths");
    if (ReadStringList(*ignored, list_path, true, &out->ignored_paths, diag)) {
      for (size_t i = 0; i < out->ignored_paths.size(); ++i) {
        if (!IsDottedPath(out->ignored_paths[i])) {
          diag.Error(ElementPath(list_path, i), "expected a dotted path like \"metadata.annotations.note\", got \"" +
                                                    out->ignored_paths[i] + "\"");
        }
      }
    }
  }
  if (auto* selector_path = FindMember(value, "node_selector_path")) {
    std::string key_path = ChildPath(path, "node_selector_path");
    if (ReadString(*selector_path, key_path, true, &out->node_selector_path, diag) &&
        !IsDottedPath(out->node_selector_path)) {
      diag.Error(key_path,
                 "expected a dotted path like \"spec.nodeSelector\", got \"" + out->node_selector_path + "\"");
      out->node_selector_path.clear();
    }
  }
  if (auto* finalizer = FindMember(value, "finalizer")) {
    ReadBool(*finalizer, ChildPath(path, "finalizer"), &out->finalizer, diag);
  }
  if (auto* success_events = FindMember(value, "success_events")) {
    ReadBool(*success_events, ChildPath(path, "success_events"), &out->success_events, diag);
  }
  if (auto* hooks = Member(value, path, "hooks", true, "an object with at least one of: " + JoinNames(HookReasons()),
                           diag)) {
    ReadHooks(*hooks, ChildPath(path, "hooks"), out, diag);
  }
  if (auto* singleton = FindMember(value, "singleton")) {
    std::string key_path = ChildPath(path, "singleton");
    if (ReadBool(*singleton, key_path, &out->singleton, diag) && out->singleton) CheckSingleton(key_path, out, diag);
  }
  // After the hooks and "singleton": the policy is checked against both.
  if (auto* rollout = FindMember(value, "rollout")) {
    ReadRollout(*rollout, ChildPath(path, "rollout"), zoneinfo_dir, out, diag);
  }
  if (auto* outputs = FindMember(value, "node_outputs")) {
    std::string key_path = ChildPath(path, "node_outputs");
    // One agent acts for a singleton resource: what it did is not any one node's.
    if (out->singleton) diag.Error(key_path, "a singleton resource has no per-node outputs");
    ReadNodeOutputs(*outputs, key_path, out, diag);
  }
  if (auto* ready = FindMember(value, "ready_condition")) {
    std::string key_path = ChildPath(path, "ready_condition");
    // The leader alone handles a singleton resource: its Events and annotation say how it went.
    if (out->singleton) diag.Error(key_path, "a singleton resource has no per-node results to sum up");
    ReadReadyCondition(*ready, key_path, out, diag);
  }
}

}  // namespace nodehook
