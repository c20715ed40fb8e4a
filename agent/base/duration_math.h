// Floating-point amounts of time to Duration without undefined behaviour: converting a double
// that does not fit into int64_t is UB in C++, and a retry delay computed from a hook's
// "delay_seconds": 1e33 or a large factor must never wrap into a negative delay (a hot loop).
// Pure functions; thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "agent/base/clock.h"

namespace nodehook {

// `ms` milliseconds, truncated toward zero. NaN is zero; values beyond the range of Duration
// saturate at Duration::max() / Duration::min().
inline Duration SaturatingMillis(double ms) {
  if (std::isnan(ms)) return Duration::zero();
  constexpr double kLimit = 9223372036854775808.0;  // 2^63: the first double above INT64_MAX
  if (ms >= kLimit) return Duration::max();
  if (ms < -kLimit) return Duration::min();
  return Duration(static_cast<int64_t>(ms));
}

// `seconds` as a Duration, clamped to [0, max]: what a delay read from untrusted input becomes.
inline Duration ClampedSeconds(double seconds, Duration max) {
  if (!(seconds > 0)) return Duration::zero();  // also NaN
  const double max_seconds = static_cast<double>(max.count()) / 1000.0;
  if (seconds >= max_seconds) return max;
  return SaturatingMillis(seconds * 1000.0);
}

// "12.3s": a delay in a log line's "next".
inline std::string SecondsText(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

// The sooner of two "look again in" delays; nullopt (never) only when both are.
inline std::optional<Duration> Earliest(std::optional<Duration> a, std::optional<Duration> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace nodehook
