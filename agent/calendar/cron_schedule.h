// The instants a cron expression names in one time zone: its matching wall-clock minutes mapped
// with TimeZone::FromCivil (so each matching minute is one instant, also on DST switch days).
// Searches step over whole days that cannot match, so a search over a year costs a few hundred
// day checks, not half a million minutes. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "agent/calendar/cron.h"
#include "agent/calendar/time_zone.h"

namespace nodehook {

// The earliest instant in [from, until] that the expression names in `zone`, if any.
std::optional<int64_t> NextCronStart(const CronSpec& spec, const TimeZone& zone, int64_t from, int64_t until);

// The latest instant in [not_before, at] that the expression names in `zone`, if any.
std::optional<int64_t> PreviousCronStart(const CronSpec& spec, const TimeZone& zone, int64_t at,
                                         int64_t not_before);

}  // namespace nodehook
