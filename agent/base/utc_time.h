// Dates in UTC, as text and as days: the one place that formats and parses the timestamps the
// agent writes and reads (RFC 3339 in logs, metav1.MicroTime in Events and Leases, RFC 3339 from
// exec plugins and Leases, HTTP-dates from the API server) and the day arithmetic under them
// (H. Hinnant's days_from_civil / civil_from_days), which agent/calendar builds its civil times
// on. No time zones (agent/calendar has them), no TZ or gmtime_r. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/base/clock.h"
#include "agent/base/status.h"

namespace nodehook {

// Days since 1970-01-01 of a date in the proleptic Gregorian calendar (any year; month 1-12,
// day 1-31), and back.
int64_t DaysFromCivil(int year, int month, int day);
void CivilFromDays(int64_t days, int* year, int* month, int* day);

// "2026-11-29T17:21:40.308Z": RFC 3339 with milliseconds (the log's timestamps).
std::string Rfc3339Millis(TimePoint t);
// "2026-11-29T17:21:40.308000Z": a metav1.MicroTime (Events' eventTime, Leases' renewTime), to
// the millisecond.
std::string MicroTime(TimePoint t);
// "20261129T172140Z": ISO 8601's basic format, to the second (for file names).
std::string BasicUtcStamp(TimePoint t);

// An RFC 3339 time ("2024-01-02T03:04:05Z", fractions and +hh:mm offsets allowed), to the
// millisecond. kInvalid otherwise.
Result<TimePoint> ParseRfc3339(const std::string& text);

// An HTTP-date ("Tue, 01 Dec 2026 22:40:21 GMT", RFC 9110 IMF-fixdate) as Unix milliseconds; -1
// when it is not one.
int64_t ParseHttpDate(std::string_view text);

}  // namespace nodehook
