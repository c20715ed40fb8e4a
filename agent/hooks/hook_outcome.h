// How a hook run ended, in the terms of the hook protocol (README, "The hook protocol"):
//   exit 0                  -> done
//   exit 75 (EX_TEMPFAIL)   -> retry later: a temporary failure, retried after the delay asked for
//   exit 100                -> in progress: multi-step work started and is not finished; not an error
//   anything else           -> failed: retried with backoff until the retry limits say stop
// A hook may write {"delay_seconds": N, "message": "...", "node": {...}} to $NODEHOOK_RESULT_FILE
// ("node": its node outputs, read by outputs/published_outputs.h).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "agent/process/action_runner.h"
#include "agent/base/clock.h"
#include "agent/base/printable.h"
#include "agent/base/status.h"

namespace nodehook {

inline constexpr int kExitRetryLater = 75;
inline constexpr int kExitInProgress = 100;

// A larger delay_seconds is used as this maximum (and the message says so).
inline constexpr Duration kMaxHookDelay = std::chrono::hours(24);
// Bytes of a result file the agent reads; a larger file is a hook error.
inline constexpr size_t kResultFileLimit = 64 * 1024;
// Bytes of a hook's message that go into one log line (the store keeps the whole message).
inline constexpr size_t kLogMessageLimit = 512;

enum class HookVerdict { kDone, kRetryLater, kInProgress, kFailed, kCancelled };

const char* HookVerdictName(HookVerdict v);

struct HookOutcome {
  HookVerdict verdict = HookVerdict::kFailed;
  std::optional<Duration> delay;  // what the hook asked for, if anything
  std::string message;            // the hook's own message, else a summary of how it ended (stored)
  bool timed_out = false;         // killed after the hook's timeout (verdict kFailed)
  Duration duration{0};           // how long the hook ran
  std::string node_outputs;       // the result file's "node" value as JSON text; "" = none given
  bool reboot = false;            // the result file's "reboot": true (a rollout with reboot steps reboots)

  // `message` cut to at most about kLogMessageLimit bytes for a log line.
  std::string LogMessage() const;
};

// The result file as the agent found it: nullopt when the hook wrote none, an error when it
// could not be used (not a regular file, larger than kResultFileLimit, unreadable).
using ResultFileContent = Result<std::optional<std::string>>;

// A malformed result file never turns a failure into success; its problem is added to the
// message. An unusable one (the error above) is a hook error: exit 0 becomes failed, exits 75 and
// 100 keep their meaning with the default delay (the delay asked for is unknown), others stay failed.
HookOutcome ClassifyHookResult(const ActionResult& result, const ResultFileContent& result_file);


}  // namespace nodehook
