#include "agent/app/run_state.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "agent/process/memory_work_dir.h"
#include "agent/process/remove_tree.h"
#include "agent/base/log.h"
#include "agent/base/metrics.h"
#include "agent/pipeline/agent.h"

namespace nodehook {
namespace {

void SweepHookWorkDir(const std::string& work_dir) {
  auto swept = SweepScratchDirs(work_dir);
  if (!swept.ok()) {
    Log(LogLevel::kWarn, "hook scratch directories not swept",
        {{"dir", work_dir}, {"error", swept.status().message()}, {"next", "start anyway; try again at the next start"}});
  } else if (*swept > 0) {
    Log(LogLevel::kInfo, "hook scratch directories swept",
        {{"dir", work_dir}, {"removed", *swept}, {"next", "start"}});
  }
}

// tuning.hook_work_dir, else a private directory in memory, else next to the state file.
std::string ResolveHookWorkDir(const Config& config) {
  if (!config.tuning.hook_work_dir.empty()) return config.tuning.hook_work_dir;
  std::vector<std::string> refused;
  std::optional<std::string> memory = ChooseMemoryWorkDir(DefaultMemoryRoots(), config.state_file, &refused);
  for (const std::string& why : refused) {
    Log(LogLevel::kWarn, "memory-backed hook work directory refused",
        {{"reason", why}, {"next", memory ? "use " + *memory : "try the next one, else the state directory"}});
  }
  std::string dir = memory.value_or(DefaultHookWorkDir(config.state_file));
  Log(LogLevel::kInfo, "hook work directory chosen",
      {{"dir", dir}, {"in_memory", memory.has_value()}, {"next", "sweep it"}});
  return dir;
}

// Loud in three places: the log (OpenStateForAgent), the metrics and an Event on the Node.
void ReportStateAtStart(const OpenedState& state, const std::string& state_file, Agent& agent) {
  if (state.recovered_from_corruption) {
    DefaultMetrics().GetCounter("state_file_recoveries_total", "damaged state files moved aside at start").Increment();
    agent.ReportNodeEvent("state", "StateRecovered", true,
                          "state file " + state_file + " was damaged (" + state.corruption_detail + "); moved to " +
                              state.moved_aside_to + " and started fresh");
  }
  if (state.state_file_missing) {
    DefaultMetrics()
        .GetCounter("state_file_missing_total", "state files found missing at start where an agent had run before")
        .Increment();
    agent.ReportNodeEvent("state", "StateFileMissing", true,
                          "state file " + state_file + " is gone (its lock file shows an agent ran here before); "
                          "started with an empty state: every create hook runs again");
  }
}

StoreHealthOptions StoreHealthOptionsFor(const Config& config) {
  StoreHealthOptions options;
  options.state_file = config.state_file;
  options.retry_max = std::chrono::seconds(config.tuning.retry_max_seconds);
  options.event_hold = std::chrono::seconds(config.tuning.state_event_hold_seconds);
  // Past the longest retry delay (store_health.h), so a failure still being retried is never let go.
  options.forget_after = 2 * std::max(options.retry_base, options.retry_max);
  return options;
}

// Refuses a missing, read-only, network or (unless allowed) in-memory state directory, and a full
// disk, before waiting for any lock. Logs why.
bool StateDirectoryUsable(const Config& config, const StateDirectoryRules& rules) {
  if (Status dir = CheckStateDirectory(config.state_file, rules); !dir.ok()) {
    Log(LogLevel::kError, "unusable state directory", {{"error", dir.ToString()}, {"next", "exit 1"}});
    return false;
  }
  // A full disk is refused the same way whether the last stop was clean or a kill (state_file.h).
  if (Status space = CheckStateFreeSpace(config.state_file); !space.ok()) {
    Log(LogLevel::kError, "cannot open the state file",
        {{"state_file", config.state_file}, {"error", space.ToString()}, {"next", "exit 1"}});
    return false;
  }
  return true;
}

// One writer per state file: a second copy on this node waits here, not ready and not acting.
std::optional<StateLock> TakeStateLock(const Config& config, const CancelToken& stop, int* exit_code) {
  auto lock = StateLock::Acquire(config.state_file, stop, [&](const std::string& holder) {
    Log(LogLevel::kWarn, "state file locked by another agent",
        {{"state_file", config.state_file}, {"holder", holder}, {"next", "wait for it to exit, then take over"}});
  });
  if (!lock.ok()) {
    bool stopped = lock.status().code() == StatusCode::kCancelled;
    Log(stopped ? LogLevel::kInfo : LogLevel::kError, "state lock not taken",
        {{"state_file", config.state_file}, {"error", lock.status().ToString()}, {"next", "exit"}});
    *exit_code = stopped ? 0 : 1;
    return std::nullopt;
  }
  return std::move(lock).value();
}

}  // namespace

RunState::RunState(StateLock taken, OpenedState opened_state, const Config& config)
    : lock(std::move(taken)),
      opened(std::move(opened_state)),
      state_file(config.state_file),
      health(SystemClock::Instance(), StoreHealthOptionsFor(config)),
      store(*opened.store, *opened.store, health) {}

void RunState::AttachAgent(Agent& agent) {
  health.SetListener([&agent](const StoreHealthChange& change) {
    agent.ReportNodeEvent("state", change.reason, change.failing, change.note);
  });
  store.SetOnObjectWritten([&agent](const std::string& uid) { agent.ObjectWritten(uid); });
  ReportStateAtStart(opened, state_file, agent);
}

void RunState::DetachAgent() {
  health.SetListener(nullptr);
  store.SetOnObjectWritten(nullptr);
}

std::unique_ptr<RunState> OpenRunState(Config* config, const CancelToken& stop, int* exit_code) {
  *exit_code = 1;
  StateDirectoryRules dir_rules;
  dir_rules.allow_volatile = config->allow_volatile_state;
  if (!StateDirectoryUsable(*config, dir_rules)) return nullptr;
  std::optional<StateLock> lock = TakeStateLock(*config, stop, exit_code);
  if (!lock) return nullptr;
  // Resolved once, so every part of the agent uses the directory checked here.
  config->tuning.hook_work_dir = ResolveHookWorkDir(*config);
  const std::string& scratch = config->tuning.hook_work_dir;
  // Make what older versions left readable by others private.
  if (Status dir = PrepareStateDirectory(config->state_file, scratch, dir_rules); !dir.ok()) {
    Log(LogLevel::kError, "cannot make the state private",
        {{"state_file", config->state_file}, {"error", dir.ToString()}, {"next", "exit 1"}});
    return nullptr;
  }
  // Ours alone now: what hooks of an earlier run left behind can go.
  SweepHookWorkDir(scratch);
  // Integrity check; a damaged file is moved aside (logged there) and the store starts fresh.
  StoreOptions store_options;
  store_options.metrics = &DefaultMetrics();
  PriorUse prior{lock->lock_file_existed(), lock->previous_holder()};
  auto state = OpenStateForAgent(config->state_file, config->node_name, store_options, SystemClock::Instance(),
                                 dir_rules, prior);
  if (!state.ok()) {
    Log(LogLevel::kError, "cannot open the state file",
        {{"state_file", config->state_file}, {"error", state.status().ToString()}, {"next", "exit 1"}});
    return nullptr;
  }
  return std::make_unique<RunState>(std::move(*lock), std::move(state).value(), *config);
}

}  // namespace nodehook
