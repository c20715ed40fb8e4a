// The POSIX TZ rule a TZif file ends with (its footer, RFC 8536 section 3.3), e.g.
// "CET-1CEST,M3.5.0,M10.5.0/3" or "<+0530>-5:30": the zone's local time after the last
// transition listed in the file. Modern zoneinfo files ("slim") list few transitions and rely
// on it for every date after them.
// Value types; thread-safe once built.
#pragma once

#include <cstdint>
#include <string>

#include "agent/base/status.h"

namespace nodehook {

struct PosixTzRule {
  // When daylight saving time starts or ends: a day of the year and a local time of day.
  struct Date {
    enum class Kind { kJulian1, kDayOfYear0, kMonthWeekDay };  // "Jn", "n", "Mm.w.d"
    Kind kind = Kind::kMonthWeekDay;
    int day = 0;      // Jn: 1-365, never counting 29 Feb; n: 0-365, counting it
    int month = 0;    // Mm.w.d: month 1-12,
    int week = 0;     // week 1-5 (5 = the last such weekday of the month),
    int weekday = 0;  // 0 = Sunday
    // Local wall-clock time of day of the change, in the offset in force before it. RFC 8536
    // allows -167 to 167 hours (e.g. "M3.5.0/-1" or "J365/25").
    int seconds = 2 * 3600;
  };

  struct Local {
    int offset = 0;  // seconds east of UTC
    bool dst = false;
    const std::string* abbreviation = nullptr;  // points into the rule
  };

  std::string std_abbreviation;
  int std_offset = 0;  // seconds east of UTC (POSIX writes west as positive; already negated here)
  bool has_dst = false;
  std::string dst_abbreviation;
  int dst_offset = 0;
  Date start;  // standard -> daylight
  Date end;    // daylight -> standard

  // The offset in force at `unix_seconds`.
  Local At(int64_t unix_seconds) const;
};

// Parses a TZ string as RFC 8536 allows it in a footer. A daylight name with no rule (",start,end")
// is refused: POSIX leaves its dates to the implementation, and zic always writes them.
Result<PosixTzRule> ParsePosixTz(const std::string& text);

}  // namespace nodehook
