#include "agent/hooks/hook_outcome.h"

#include "agent/base/printable.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "agent/base/duration_math.h"

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


std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// delay_seconds: a number of seconds >= 0; more than kMaxHookDelay is used as kMaxHookDelay.
std::string ReadDelay(const rapidjson::Value& v, HookOutcome* out) {
  const double max_seconds = std::chrono::duration<double>(kMaxHookDelay).count();
  if (!v.IsNumber()) return "delay_seconds: expected a number >= 0";
  const double seconds = v.GetDouble();
  if (!std::isfinite(seconds) || seconds < 0) {
    return "delay_seconds: expected a number >= 0, got " + Number(seconds);
  }
  out->delay = ClampedSeconds(seconds, kMaxHookDelay);
  if (seconds > max_seconds) {
    return "delay_seconds: " + Number(seconds) + " is more than the maximum " + Number(max_seconds) + ", used " +
           Number(max_seconds);
  }
  return "";
}

// Whether `v` nests more than `limit` levels of arrays and objects; iterative.
bool DeeperThan(const rapidjson::Value& v, int limit) {
  std::vector<std::pair<const rapidjson::Value*, int>> todo{{&v, 0}};
  while (!todo.empty()) {
    auto [value, depth] = todo.back();
    todo.pop_back();
    if (!value->IsObject() && !value->IsArray()) continue;
    if (depth >= limit) return true;
    if (value->IsObject()) {
      for (auto it = value->MemberBegin(); it != value->MemberEnd(); ++it) todo.emplace_back(&it->value, depth + 1);
    } else {
      for (const auto& item : value->GetArray()) todo.emplace_back(&item, depth + 1);
    }
  }
  return false;
}

// Reads the optional result file into `out`; returns a problem description or "".
std::string ReadResultFile(const std::string& json, HookOutcome* out) {
  rapidjson::Document doc;
  // Iterative: a result file nested thousands of levels deep must not exhaust the worker's stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(json.c_str(), json.size());
  if (doc.HasParseError()) {
    return "result file ignored: invalid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": " +
           rapidjson::GetParseError_En(doc.GetParseError());
  }
  if (!doc.IsObject()) return "result file ignored: expected a JSON object";
  std::string problems;
  auto add = [&problems](const std::string& problem) {
    if (!problem.empty()) problems += "result file: " + problem + "; ";
  };
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const rapidjson::Value& v = it->value;
    if (key == "delay_seconds") {
      add(ReadDelay(v, out));
    } else if (key == "message") {
      if (v.IsString()) {
        out->message.assign(v.GetString(), v.GetStringLength());
      } else {
        add("message: expected a string");
      }
    } else if (key == "node") {
      // Its form nests 3 levels; deeper is refused before Accept, which recurses.
      if (DeeperThan(v, 4)) {
        add("node: nested deeper than node outputs are");
        continue;
      }
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
      v.Accept(w);
      out->node_outputs = buffer.GetString();
    } else if (key == "reboot") {
      if (v.IsBool()) {
        out->reboot = v.GetBool();
      } else {
        add("reboot: expected true or false");
      }
    } else {
      add(Abbreviate(key, 64) + ": unknown key (expected delay_seconds, message, node, reboot)");
    }
  }
  if (!problems.empty()) problems.resize(problems.size() - 2);
  return problems;
}

HookVerdict VerdictOfExitCode(int exit_code) {
  switch (exit_code) {
    case 0: return HookVerdict::kDone;
    case kExitRetryLater: return HookVerdict::kRetryLater;
    case kExitInProgress: return HookVerdict::kInProgress;
    default: return HookVerdict::kFailed;
  }
}

std::string Summary(const ActionResult& result) {
  std::string last = LastLine(result.output);
  return last.empty() ? result.message : result.message + ": " + last;
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

std::string HookOutcome::LogMessage() const { return Abbreviate(message, kLogMessageLimit); }

HookOutcome ClassifyHookResult(const ActionResult& result, const ResultFileContent& result_file) {
  HookOutcome out;
  out.timed_out = result.kind == ActionResult::Kind::kTimedOut;
  out.duration = result.duration;
  if (result.kind == ActionResult::Kind::kCancelled) {
    out.verdict = HookVerdict::kCancelled;
    out.message = result.message;
    return out;
  }
  if (result.kind != ActionResult::Kind::kExited) {
    out.verdict = HookVerdict::kFailed;
    out.message = Summary(result);
    return out;
  }
  out.verdict = VerdictOfExitCode(result.exit_code);
  if (!result_file.ok()) {
    // The hook broke the protocol: its success cannot be taken at its word, and whatever it
    // asked for is unknown. "Retry later" and "in progress" run again anyway, with the default delay.
    if (out.verdict == HookVerdict::kDone) out.verdict = HookVerdict::kFailed;
    out.message = result.message + ": " + result_file.status().message();
    return out;
  }
  const std::optional<std::string>& json = *result_file;
  std::string problem = json && !json->empty() ? ReadResultFile(*json, &out) : "";  // empty: nothing to say
  if (out.message.empty()) out.message = Summary(result);
  if (!problem.empty()) out.message += " (" + problem + ")";
  return out;
}

}  // namespace nodehook
