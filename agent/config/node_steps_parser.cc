#include "agent/config/node_steps_parser.h"

#include <regex>

#include "agent/config/rollout_parser.h"

namespace nodehook {
namespace {

// One requirement of a label selector (k8s.io/apimachinery/pkg/labels): key, !key, key=v, key==v,
// key!=v, key in (v,...), key notin (v,...). Keys may carry a DNS prefix.
const std::regex& RequirementPattern() {
  static const std::regex pattern(
      R"(^\s*(!\s*)?([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\s*)"
      R"(((==?|!=)\s*([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?|\s(in|notin)\s*\(\s*[-A-Za-z0-9_.]*)"
      R"((\s*,\s*[-A-Za-z0-9_.]*)*\s*\))?\s*$)");
  return pattern;
}

// Splits on the commas outside parentheses.
std::vector<std::string> Requirements(const std::string& selector) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

void ReadDrain(const rapidjson::Value& value, const std::string& path, RolloutPolicy* policy, Diagnostics& diag) {
  DrainPolicy drain;
  if (value.IsTrue()) {  // "drain": true takes the defaults
    policy->drain = drain;
    return;
  }
  if (!value.IsObject()) {
    diag.Error(path, std::string("expected true or an object {\"timeout_seconds\": ..., \"pod_selector\": ..., "
                                 "\"grace_period_seconds\": ..., \"force\": ..., \"delete_emptydir_data\": ...}, "
                                 "got ") +
                         JsonTypeName(value));
    return;
  }
  ReportUnknownKeys(value, path, DrainKeys(), diag);
  if (const rapidjson::Value* timeout = FindMember(value, "timeout_seconds")) {
    int seconds = 0;
    if (ReadIntInRange(*timeout, ChildPath(path, "timeout_seconds"), kMinDrainSeconds, kMaxDrainSeconds, &seconds,
                       diag)) {
      drain.timeout = std::chrono::seconds(seconds);
    }
  }
  if (const rapidjson::Value* selector = FindMember(value, "pod_selector")) {
    const std::string selector_path = ChildPath(path, "pod_selector");
    if (ReadString(*selector, selector_path, true, &drain.pod_selector, diag)) {
      std::string problem = LabelSelectorProblem(drain.pod_selector);
      if (!problem.empty()) {
        diag.Error(selector_path, "expected a label selector such as \"app=web\" or \"tier in (a,b),!canary\"; " +
                                      problem);
      }
    }
  }
  if (const rapidjson::Value* grace = FindMember(value, "grace_period_seconds")) {
    const std::string grace_path = ChildPath(path, "grace_period_seconds");
    if (grace->IsInt() && grace->GetInt() == 0) {
      // kubectl too refuses a drain's --grace-period=0 without --force: 0 deletes the pods at
      // once, their containers possibly still running, with no shutdown at all.
      diag.Error(grace_path, "expected 1 to " + std::to_string(kMaxGracePeriodSeconds) +
                                 " seconds, got 0: 0 deletes each pod at once, without its shutdown; leave the key "
                                 "out to give each pod its own terminationGracePeriodSeconds");
    } else {
      ReadIntInRange(*grace, grace_path, 1, kMaxGracePeriodSeconds, &drain.grace_period_seconds, diag);
    }
  }
  if (const rapidjson::Value* force = FindMember(value, "force")) {
    ReadBool(*force, ChildPath(path, "force"), &drain.force, diag);
  }
  if (const rapidjson::Value* emptydir = FindMember(value, "delete_emptydir_data")) {
    ReadBool(*emptydir, ChildPath(path, "delete_emptydir_data"), &drain.delete_emptydir_data, diag);
  }
  policy->drain = drain;
}

void ReadReboot(const rapidjson::Value& value, const std::string& path, RolloutPolicy* policy, Diagnostics& diag) {
  if (!ExpectObject(value, path, diag)) return;
  ReportUnknownKeys(value, path, RebootKeys(), diag);
  RebootPolicy reboot;
  const std::string argv_path = ChildPath(path, "argv");
  if (const rapidjson::Value* argv = FindMember(value, "argv")) {
    if (ReadStringList(*argv, argv_path, false, &reboot.argv, diag) && reboot.argv[0][0] != '/') {
      diag.Error(ElementPath(argv_path, 0), "expected an absolute path to the program, got \"" + reboot.argv[0] + "\"");
    }
  } else {
    diag.Error(argv_path, "missing (expected the command that reboots the node, e.g. "
                          "[\"nsenter\", \"-t\", \"1\", \"-m\", \"--\", \"systemctl\", \"reboot\"])");
  }
  if (const rapidjson::Value* timeout = FindMember(value, "timeout_seconds")) {
    int seconds = 0;
    if (ReadIntInRange(*timeout, ChildPath(path, "timeout_seconds"), kMinRebootSeconds, kMaxRebootSeconds, &seconds,
                       diag)) {
      reboot.timeout = std::chrono::seconds(seconds);
    }
  }
  policy->reboot = std::move(reboot);
}

}  // namespace

const char* OnFailureName(OnFailure on_failure) {
  return on_failure == OnFailure::kUncordon ? "uncordon" : "keep_cordoned";
}

const std::vector<std::string>& NodeStepKeys() {
  static const std::vector<std::string> keys = {"cordon", "drain", "reboot", "on_failure"};
  return keys;
}

const std::vector<std::string>& DrainKeys() {
  static const std::vector<std::string> keys = {"timeout_seconds", "pod_selector", "grace_period_seconds", "force",
                                                "delete_emptydir_data"};
  return keys;
}

const std::vector<std::string>& RebootKeys() {
  static const std::vector<std::string> keys = {"argv", "timeout_seconds"};
  return keys;
}

const std::vector<std::string>& OnFailureNames() {
  static const std::vector<std::string> names = {"keep_cordoned", "uncordon"};
  return names;
}

std::string LabelSelectorProblem(const std::string& selector) {
  int depth = 0;
  for (char c : selector) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth < 0 || depth > 1) return "unbalanced parentheses";
  }
  if (depth != 0) return "unbalanced parentheses";
  for (const std::string& requirement : Requirements(selector)) {
    if (!std::regex_match(requirement, RequirementPattern())) {
      return "\"" + requirement + "\" is not a requirement (key, !key, key=value, key!=value, key in (a,b), "
             "key notin (a,b))";
    }
  }
  return "";
}

void ReadNodeSteps(const rapidjson::Value& rollout, const std::string& path, RolloutPolicy* policy,
                   Diagnostics& diag) {
  if (const rapidjson::Value* cordon = FindMember(rollout, "cordon")) {
    if (cordon->IsBool()) {
      policy->cordon = cordon->GetBool();
    } else {
      diag.Error(ChildPath(path, "cordon"), std::string("expected true or false, got ") + JsonTypeName(*cordon));
    }
  }
  if (const rapidjson::Value* drain = FindMember(rollout, "drain")) {
    if (!drain->IsFalse()) ReadDrain(*drain, ChildPath(path, "drain"), policy, diag);
  }
  if (const rapidjson::Value* reboot = FindMember(rollout, "reboot")) {
    ReadReboot(*reboot, ChildPath(path, "reboot"), policy, diag);
  }
  if (const rapidjson::Value* on_failure = FindMember(rollout, "on_failure")) {
    const std::string on_failure_path = ChildPath(path, "on_failure");
    std::string name;
    if (ReadString(*on_failure, on_failure_path, true, &name, diag)) {
      if (name == "keep_cordoned") {
        policy->on_failure = OnFailure::kKeepCordoned;
      } else if (name == "uncordon") {
        policy->on_failure = OnFailure::kUncordon;
      } else {
        diag.Error(on_failure_path, "expected one of: " + JoinNames(OnFailureNames()) + ", got \"" + name + "\"");
      }
      if (!policy->Cordons()) {
        diag.Error(on_failure_path, "says what to do with a node the rollout cordoned, but the rollout neither "
                                    "cordons nor drains (set \"cordon\": true or \"drain\")");
      }
    }
  }
}

}  // namespace nodehook
