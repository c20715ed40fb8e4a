#include "agent/core/hook_outcome.h"

#include <rapidjson/document.h>

namespace nodehook {
namespace {

// The last non-empty line of the hook's output: enough to say why without flooding the log.
std::string LastLine(const std::string& output) {
  size_t end = output.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  size_t start = output.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return output.substr(start, end - start + 1);
}

// Larger delays would overflow the conversion to milliseconds (undefined behaviour; found by
// test/fuzz/hook_result_fuzzer).
constexpr double kMaxDelaySeconds = 365.0 * 24 * 3600;

// Reads the optional result file into `out`; returns a problem description or "".
std::string ReadResultFile(const std::string& json, HookOutcome* out) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return "result file ignored: expected a JSON object";
  std::string problems;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const rapidjson::Value& v = it->value;
    if (key == "delay_seconds") {
      if (v.IsNumber() && v.GetDouble() >= 0 && v.GetDouble() <= kMaxDelaySeconds) {
        out->delay = Duration(static_cast<int64_t>(v.GetDouble() * 1000));
      } else {
        problems += "result file: delay_seconds: expected a number >= 0 and at most 31536000 (a year); ";
      }
    } else if (key == "message") {
      if (v.IsString()) {
        out->message = v.GetString();
      } else {
        problems += "result file: message: expected a string; ";
      }
    } else {
      problems += "result file: " + key + ": unknown key (expected delay_seconds, message); ";
    }
  }
  if (!problems.empty()) problems.resize(problems.size() - 2);
  return problems;
}

}  // namespace

const char* HookVerdictName(HookVerdict v) {
  switch (v) {
    case HookVerdict::kDone: return "done";
    case HookVerdict::kRetryLater: return "retry_later";
    case HookVerdict::kInProgress: return "in_progress";
    case HookVerdict::kFailed: return "failed";
    case HookVerdict::kCancelled: return "cancelled";
  }
  return "failed";
}

HookOutcome ClassifyHookResult(const ActionResult& result, const std::string& result_json) {
  HookOutcome out;
  if (result.kind == ActionResult::Kind::kCancelled) {
    out.verdict = HookVerdict::kCancelled;
    out.message = result.message;
    return out;
  }
  if (result.kind != ActionResult::Kind::kExited) {
    out.verdict = HookVerdict::kFailed;
    std::string last = LastLine(result.output);
    out.message = last.empty() ? result.message : result.message + ": " + last;
    return out;
  }
  switch (result.exit_code) {
    case 0: out.verdict = HookVerdict::kDone; break;
    case kExitRetryLater: out.verdict = HookVerdict::kRetryLater; break;
    case kExitInProgress: out.verdict = HookVerdict::kInProgress; break;
    default: out.verdict = HookVerdict::kFailed; break;
  }
  std::string problem = result_json.empty() ? "" : ReadResultFile(result_json, &out);
  if (out.message.empty()) {
    std::string last = LastLine(result.output);
    out.message = last.empty() ? result.message : result.message + ": " + last;
  }
  if (!problem.empty()) out.message += " (" + problem + ")";
  return out;
}

}  // namespace nodehook
