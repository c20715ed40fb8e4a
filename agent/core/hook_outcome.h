// How a hook run ended, in the terms of the hook protocol (README, "The hook protocol"):
//   exit 0                  -> done
//   exit 75 (EX_TEMPFAIL)   -> retry later: a temporary failure, retried after the delay asked for
//   exit 100                -> in progress: multi-step work started and is not finished; not an error
//   anything else           -> failed: retried with backoff until the retry limits say stop
// A hook may write {"delay_seconds": N, "message": "..."} to $NODEHOOK_RESULT_FILE.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "agent/actions/action_runner.h"
#include "agent/base/clock.h"

namespace nodehook {

inline constexpr int kExitRetryLater = 75;
inline constexpr int kExitInProgress = 100;

enum class HookVerdict { kDone, kRetryLater, kInProgress, kFailed, kCancelled };

const char* HookVerdictName(HookVerdict v);

struct HookOutcome {
  HookVerdict verdict = HookVerdict::kFailed;
  std::optional<Duration> delay;  // what the hook asked for, if anything
  std::string message;            // the hook's own message, else a summary of how it ended
};

// `result_json` is the content of the result file, "" when the hook wrote none. A malformed
// result file never turns a failure into success; its problem is added to the message.
HookOutcome ClassifyHookResult(const ActionResult& result, const std::string& result_json);

}  // namespace nodehook
