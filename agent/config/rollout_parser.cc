#include "agent/config/rollout_parser.h"

#include <algorithm>
#include <cctype>

#include "agent/base/kube_names.h"
#include "agent/calendar/cron.h"
#include "agent/calendar/time_zone.h"
#include "agent/config/node_steps_parser.h"
#include "agent/config/resource_parser.h"

namespace nodehook {
namespace {

// "10%" -> 10; 0 unless `text` is 1 to 3 digits without a leading zero, then a percent sign.
int ParsePercent(const std::string& text) {
  if (text.size() < 2 || text.size() > 4 || text.back() != '%' || text[0] == '0') return 0;
  int value = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return 0;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// 2, or "10%" (1% to 100%).
void ReadNodeCount(const rapidjson::Value& value, const std::string& path, NodeCount* out, Diagnostics& diag) {
  const std::string expected = "expected a number of nodes from 1 to " + std::to_string(kMaxRolloutNodes) +
                               ", or a percentage of the nodes from \"1%\" to \"100%\", e.g. 2 or \"10%\", got ";
  if (value.IsInt() && value.GetInt() >= 1 && value.GetInt() <= kMaxRolloutNodes) {
    *out = NodeCount{value.GetInt(), false};
    return;
  }
  if (value.IsString()) {
    std::string text(value.GetString(), value.GetStringLength());
    int percent = ParsePercent(text);
    if (percent >= 1 && percent <= 100) {
      *out = NodeCount{percent, true};
      return;
    }
    diag.Error(path, expected + "\"" + text + "\"");
    return;
  }
  diag.Error(path, expected + (value.IsInt() ? std::to_string(value.GetInt()) : DescribeNonInt(value)));
}

void ReadSeconds(const rapidjson::Value& rollout, const std::string& path, const char* key, int min, int max,
                 std::chrono::seconds* out, Diagnostics& diag) {
  const rapidjson::Value* value = FindMember(rollout, key);
  int seconds = 0;
  if (value != nullptr && ReadIntInRange(*value, ChildPath(path, key), min, max, &seconds, diag)) {
    *out = std::chrono::seconds(seconds);
  }
}

void ReadWindow(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                RolloutWindow* out, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, RolloutWindowKeys(), diag);
  const std::string cron_path = ChildPath(path, "cron");
  const char* cron_example = "a 5-field cron expression (minute hour day-of-month month day-of-week) for the "
                             "window's starts, e.g. \"0 22 * * 1-5\"";
  if (const rapidjson::Value* cron = FindMember(value, "cron")) {
    if (ReadString(*cron, cron_path, true, &out->cron, diag)) {
      Result<CronSpec> spec = ParseCron(out->cron);
      if (!spec.ok()) diag.Error(cron_path, std::string("expected ") + cron_example + "; " + spec.status().message());
    }
  } else {
    diag.Error(cron_path, std::string("missing (expected ") + cron_example + ")");
  }
  const std::string duration_path = ChildPath(path, "duration_seconds");
  if (const rapidjson::Value* duration = FindMember(value, "duration_seconds")) {
    int seconds = 0;
    if (ReadIntInRange(*duration, duration_path, kMinWindowSeconds, kMaxWindowSeconds, &seconds, diag)) {
      out->duration = std::chrono::seconds(seconds);
    }
  } else {
    diag.Error(duration_path, "missing (expected how long each start keeps the window open, " +
                                  std::to_string(kMinWindowSeconds) + " to " + std::to_string(kMaxWindowSeconds) +
                                  " seconds, e.g. 14400)");
  }
  if (const rapidjson::Value* zone = FindMember(value, "time_zone")) {
    const std::string zone_path = ChildPath(path, "time_zone");
    if (ReadString(*zone, zone_path, true, &out->time_zone, diag)) {
      Result<TimeZone> loaded = LoadTimeZone(out->time_zone, zoneinfo_dir);
      if (!loaded.ok()) {
        diag.Error(zone_path, "expected an IANA time zone such as \"Europe/Berlin\" or \"UTC\"; " +
                                  loaded.status().message());
      }
    }
  }
}

void ReadWindows(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                 RolloutPolicy* out, Diagnostics& diag) {
  if (!value.IsArray()) {
    diag.Error(path, std::string("expected an array of windows, each {\"cron\": ..., \"duration_seconds\": ..., "
                                 "\"time_zone\": ...}, got ") + JsonTypeName(value));
    return;
  }
  out->windows.resize(value.Size());
  for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
    ReadWindow(value[i], ElementPath(path, i), zoneinfo_dir, &out->windows[i], diag);
  }
}

// Each gated reason must have a hook on the resource. Without "reasons", create and update are
// gated where the resource has those hooks.
void ReadReasons(const rapidjson::Value* value, const std::string& path, const WatchedResource& resource,
                 RolloutPolicy* out, Diagnostics& diag) {
  const std::string reasons_path = ChildPath(path, "reasons");
  if (value == nullptr) {
    std::vector<std::string> defaults;
    for (const std::string& reason : out->reasons) {
      if (resource.hooks.count(reason)) defaults.push_back(reason);
    }
    // Nothing to gate: say so, unless the hooks themselves were not readable (already reported).
    if (defaults.empty() && !resource.hooks.empty()) {
      diag.Error(path, "gates create and update by default, but the resource has neither hook; list the reasons "
                       "to gate in \"reasons\" (one or more of: " + JoinNames(RolloutReasons()) + ")");
    }
    out->reasons = defaults;
    return;
  }
  std::vector<std::string> reasons;
  if (!ReadStringList(*value, reasons_path, false, &reasons, diag)) return;
  out->reasons.clear();
  for (size_t i = 0; i < reasons.size(); ++i) {
    const std::string item_path = ElementPath(reasons_path, i);
    const std::string& reason = reasons[i];
    const auto& allowed = RolloutReasons();
    if (std::find(allowed.begin(), allowed.end(), reason) == allowed.end()) {
      diag.Error(item_path, "expected one of: " + JoinNames(allowed) + ", got \"" + reason + "\"");
    } else if (std::find(out->reasons.begin(), out->reasons.end(), reason) != out->reasons.end()) {
      diag.Error(item_path, "\"" + reason + "\" is listed twice");
    } else if (!resource.hooks.count(reason)) {
      diag.Error(item_path, "gates \"" + reason + "\", but the resource has no " + reason + " hook (hooks." +
                                reason + ")");
    } else {
      out->reasons.push_back(reason);
    }
  }
}

}  // namespace

int NodeCount::Resolve(int nodes) const {
  if (!percent) return value;
  if (value <= 0 || nodes <= 0) return 0;
  // ceil(value% of nodes), in integers: at least 1, at most `nodes`.
  const int64_t count = (static_cast<int64_t>(value) * nodes + 99) / 100;
  return static_cast<int>(std::min<int64_t>(count, nodes));
}

const std::vector<std::string>& RolloutKeys() {
  static const std::vector<std::string> keys = {
      "max_nodes", "canary_nodes", "soak_seconds", "verify",     "max_failed_nodes",  "failure_after_retries",
      "reasons",   "windows",      "hold_label",   "slot_lease_seconds",
      "max_grants_per_second", "cordon", "drain", "reboot", "on_failure"};
  return keys;
}

const std::vector<std::string>& RolloutWindowKeys() {
  static const std::vector<std::string> keys = {"cron", "duration_seconds", "time_zone"};
  return keys;
}

const std::vector<std::string>& RolloutReasons() {
  static const std::vector<std::string> reasons = {kReasonCreate, kReasonUpdate, kReasonDelete, kReasonResume};
  return reasons;
}

void ReadRollout(const rapidjson::Value& value, const std::string& path, const std::string& zoneinfo_dir,
                 WatchedResource* resource, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, RolloutKeys(), diag);
  if (resource->singleton) {
    diag.Error(path, "cannot be combined with \"singleton\": true (a singleton resource runs its hooks on one node, "
                     "so there is nothing to roll out)");
  }
  RolloutPolicy policy;
  if (auto* max_nodes = FindMember(value, "max_nodes")) {
    ReadNodeCount(*max_nodes, ChildPath(path, "max_nodes"), &policy.max_nodes, diag);
  }
  if (auto* canaries = FindMember(value, "canary_nodes")) {
    ReadIntInRange(*canaries, ChildPath(path, "canary_nodes"), 0, kMaxRolloutNodes, &policy.canary_nodes, diag);
  }
  ReadSeconds(value, path, "soak_seconds", 0, kMaxSoakSeconds, &policy.soak, diag);
  if (auto* verify = FindMember(value, "verify")) {
    HookSpec hook;
    ReadHook(*verify, ChildPath(path, "verify"), "verify", &hook, diag);
    policy.verify = std::move(hook);
  }
  if (auto* max_failed = FindMember(value, "max_failed_nodes")) {
    ReadNodeCount(*max_failed, ChildPath(path, "max_failed_nodes"), &policy.max_failed_nodes, diag);
  }
  if (auto* retries = FindMember(value, "failure_after_retries")) {
    ReadIntInRange(*retries, ChildPath(path, "failure_after_retries"), 1, kMaxHookRetries,
                   &policy.failure_after_retries, diag);
  }
  ReadReasons(FindMember(value, "reasons"), path, *resource, &policy, diag);
  if (auto* windows = FindMember(value, "windows")) {
    ReadWindows(*windows, ChildPath(path, "windows"), zoneinfo_dir, &policy, diag);
  }
  if (auto* hold = FindMember(value, "hold_label")) {
    const std::string hold_path = ChildPath(path, "hold_label");
    if (ReadString(*hold, hold_path, true, &policy.hold_label, diag) && !IsLabelKey(policy.hold_label)) {
      diag.Error(hold_path, "expected a label key such as \"nodehook.io/rollout-hold\" (an optional DNS prefix and "
                            "\"/\", then up to 63 letters, digits, \"-\", \"_\" or \".\"), got \"" +
                                policy.hold_label + "\"");
    }
  }
  ReadSeconds(value, path, "slot_lease_seconds", kMinSlotLeaseSeconds, kMaxSlotLeaseSeconds, &policy.slot_lease, diag);
  if (auto* grants = FindMember(value, "max_grants_per_second")) {
    if (!grants->IsNumber() || grants->GetDouble() < kMinGrantsPerSecond || grants->GetDouble() > kMaxGrantsPerSecond) {
      diag.Error(ChildPath(path, "max_grants_per_second"),
                 "expected a number from 0.1 to 10000, got " + DescribeNonInt(*grants));
    } else {
      policy.max_grants_per_second = grants->GetDouble();
    }
  }
  ReadNodeSteps(value, path, &policy, diag);
  resource->rollout = std::move(policy);
}

}  // namespace nodehook
