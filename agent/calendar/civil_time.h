// Civil (calendar, wall-clock) date-times and their arithmetic in the proleptic Gregorian
// calendar, without any time zone: the common currency of the cron matcher and the zone reader.
// Pure functions on value types; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "agent/base/utc_time.h"  // DaysFromCivil, CivilFromDays

namespace nodehook {

inline constexpr int64_t kSecondsPerDay = 86'400;

// A wall-clock time, to the second. month 1-12, day 1-31, hour 0-23, minute and second 0-59.
struct CivilTime {
  int year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;

  bool operator==(const CivilTime& o) const {
    return year == o.year && month == o.month && day == o.day && hour == o.hour && minute == o.minute &&
           second == o.second;
  }
  bool operator!=(const CivilTime& o) const { return !(*this == o); }
  // "2026-03-29 02:30:00"
  std::string ToString() const;
};

// a / b rounded towards minus infinity (b > 0), for times before 1970 and negative offsets.
inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); }

// 0 = Sunday ... 6 = Saturday.
int WeekdayFromDays(int64_t days);

bool IsLeapYear(int year);
int DaysInMonth(int year, int month);

// The civil time `seconds` after 1970-01-01 00:00:00, and back. In a zone, "local seconds" are
// unix seconds plus the UTC offset: ToCivil(unix + offset) is the wall clock there.
CivilTime CivilFromSeconds(int64_t seconds);
int64_t SecondsFromCivil(const CivilTime& t);

}  // namespace nodehook
