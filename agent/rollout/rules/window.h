// Maintenance windows of a rollout (RolloutWindow in config.h): whether gated work may start now,
// until when, and when it may start next. Judged at an instant the caller passes in (the API
// server's clock, per the rollout design), never the machine's clock or TZ.
//
// A window opens at each instant its cron expression names in its own time zone
// (NextCronStart: one instant per matching wall-clock minute, also on DST switch days) and
// stays open for its duration: open at `now` when some start s has s <= now < s + duration.
//
// CompiledWindow is an immutable value (its zone is shared read-only): thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/calendar/cron.h"
#include "agent/calendar/time_zone.h"
#include "agent/config/config.h"

namespace nodehook {

// Made by CompileWindows: `zone` is never null and `duration_seconds` is above 0.
struct CompiledWindow {
  CronSpec cron;
  std::shared_ptr<const TimeZone> zone;
  int64_t duration_seconds = 0;
};

// All unix seconds.
struct WindowState {
  bool open = true;
  // When open: when the windows stop being open, following windows that start before (or as)
  // the open one ends. Followed for at most kWindowChainSeconds ahead: a set open longer than
  // that reports a time at least that far ahead (re-judge then). 0 when closed, or when there
  // are no windows (always open).
  int64_t closes_at = 0;
  // When closed: the next start of any window, searched kWindowSearchSeconds ahead; 0 when open
  // or when no window starts that soon (e.g. "0 0 30 2 *").
  int64_t next_open_at = 0;
};

inline constexpr int64_t kWindowSearchSeconds = 366 * 24 * 3600;
inline constexpr int64_t kWindowChainSeconds = 8 * 24 * 3600;  // above the 7-day longest window

// Parses each window's cron and loads its zone from `zoneinfo_dir` (a zone used by several
// windows is loaded once). An error names the window: "windows[1].time_zone: ...".
Result<std::vector<CompiledWindow>> CompileWindows(const std::vector<RolloutWindow>& windows,
                                                   const std::string& zoneinfo_dir = kDefaultZoneInfoDir);

// An empty list means no windows were configured: always open (open, closes_at 0).
WindowState JudgeWindows(const std::vector<CompiledWindow>& windows, int64_t now_unix_seconds);

// What the rules (rollout_judge.h) take of the windows at an instant, in milliseconds.
struct WindowNow {
  bool open = true;
  int64_t next_open_ms = 0;
};
// The agent's gate and kubectl alike: windows that did not compile are closed, for good.
WindowNow WindowsNow(const Result<std::vector<CompiledWindow>>& windows, int64_t now_ms);

}  // namespace nodehook
