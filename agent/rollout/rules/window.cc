#include "agent/rollout/rules/window.h"

#include <algorithm>
#include <map>
#include <optional>

#include "agent/calendar/cron_schedule.h"

namespace nodehook {
namespace {

// The end of the window opened by the latest start of `w` in (t - duration, t], if any: the
// window is open at t exactly when this is later than t.
std::optional<int64_t> OpenUntil(const CompiledWindow& w, int64_t t) {
  std::optional<int64_t> start = PreviousCronStart(w.cron, *w.zone, t, t - w.duration_seconds + 1);
  if (!start) return std::nullopt;
  return *start + w.duration_seconds;
}

}  // namespace

Result<std::vector<CompiledWindow>> CompileWindows(const std::vector<RolloutWindow>& windows,
                                                   const std::string& zoneinfo_dir) {
  std::vector<CompiledWindow> compiled;
  std::map<std::string, std::shared_ptr<const TimeZone>> zones;
  for (size_t i = 0; i < windows.size(); ++i) {
    const RolloutWindow& window = windows[i];
    const std::string where = "windows[" + std::to_string(i) + "]";
    Result<CronSpec> cron = ParseCron(window.cron);
    if (!cron.ok()) return InvalidError(where + ".cron: " + cron.status().message());
    if (window.duration.count() <= 0) return InvalidError(where + ".duration_seconds: expected more than 0");
    std::shared_ptr<const TimeZone>& zone = zones[window.time_zone];
    if (!zone) {
      Result<TimeZone> loaded = LoadTimeZone(window.time_zone, zoneinfo_dir);
      if (!loaded.ok()) return Status(loaded.status().code(), where + ".time_zone: " + loaded.status().message());
      zone = std::make_shared<const TimeZone>(std::move(loaded).value());
    }
    compiled.push_back(CompiledWindow{std::move(cron).value(), zone, window.duration.count()});
  }
  return compiled;
}

WindowState JudgeWindows(const std::vector<CompiledWindow>& windows, int64_t now) {
  WindowState state;
  if (windows.empty()) return state;
  int64_t closes_at = 0;
  for (const CompiledWindow& w : windows) {
    if (std::optional<int64_t> until = OpenUntil(w, now)) closes_at = std::max(closes_at, *until);
  }
  if (closes_at > now) {
    // Follow windows that start before the open one ends: no instant in between is closed.
    for (bool extended = true; extended && closes_at < now + kWindowChainSeconds;) {
      extended = false;
      for (const CompiledWindow& w : windows) {
        std::optional<int64_t> until = OpenUntil(w, closes_at);
        if (until && *until > closes_at) {
          closes_at = *until;
          extended = true;
        }
      }
    }
    state.closes_at = closes_at;
    return state;
  }
  state.open = false;
  for (const CompiledWindow& w : windows) {
    std::optional<int64_t> start = NextCronStart(w.cron, *w.zone, now + 1, now + kWindowSearchSeconds);
    if (start && (state.next_open_at == 0 || *start < state.next_open_at)) state.next_open_at = *start;
  }
  return state;
}

WindowNow WindowsNow(const Result<std::vector<CompiledWindow>>& windows, int64_t now_ms) {
  if (!windows.ok()) return WindowNow{false, 0};
  WindowState state = JudgeWindows(*windows, now_ms / 1000);
  return WindowNow{state.open, state.next_open_at * 1000};
}

}  // namespace nodehook
