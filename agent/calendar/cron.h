// 5-field cron expressions (minute hour day-of-month month day-of-week), as Vixie cron reads them,
// parsed once into bit sets and matched against civil (local) minutes. Zone-free: the caller
// decides which zone's wall clock a minute is (agent/rollout/rules/window.h).
// Value types; thread-safe once built.
#pragma once

#include <bitset>
#include <string>

#include "agent/base/status.h"
#include "agent/calendar/civil_time.h"

namespace nodehook {

// Accepted per field: `*`, a number or a name, ranges `a-b`, steps `*/n` and `a-b/n`, and lists of
// those separated by commas. Ranges: minute 0-59, hour 0-23, day of month 1-31, month 1-12 or
// JAN-DEC, day of week 0-7 or SUN-SAT (0 and 7 are Sunday). Names are case-insensitive.
// Not accepted: `@daily`-style macros, `a/n` without a range, `L`, `W`, `#`, `?` (Quartz).
struct CronSpec {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  // bit 0 unused
  std::bitset<13> months;         // bit 0 unused
  std::bitset<7> days_of_week;    // 0 = Sunday
  // Vixie's DOM_STAR / DOW_STAR: the field starts with `*` (also `*/2`). When neither does, a day
  // matches when EITHER field matches ("0 0 1 * MON" = the 1st and every Monday); otherwise both
  // must (the `*` one matches every day anyway).
  bool day_of_month_star = true;
  bool day_of_week_star = true;
  std::string text;  // the expression as written, for messages

  // Whether the date (any time of that day) can match: the month, and the day rule above.
  bool MatchesDay(int year, int month, int day) const;
  // Whether the civil minute matches (its seconds are ignored).
  bool Matches(const CivilTime& t) const;
};

// Parses an expression; an error names the field ("day-of-month field \"32\": ...") and what was
// expected.
Result<CronSpec> ParseCron(const std::string& text);

}  // namespace nodehook
