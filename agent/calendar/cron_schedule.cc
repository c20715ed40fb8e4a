#include "agent/calendar/cron_schedule.h"

#include <algorithm>

namespace nodehook {
namespace {

constexpr int kMinutesPerDay = 24 * 60;

// The wall-clock minutes (local seconds / 60) that can map to instants in [lo, hi]: FromCivil
// is monotonic, and the offsets in force within two days of an instant bound its wall clock.
struct MinuteRange {
  int64_t first;
  int64_t last;
};
MinuteRange LocalMinutes(const TimeZone& zone, int64_t lo, int64_t hi) {
  auto offsets = [&](int64_t t) {
    return std::minmax({zone.OffsetAt(t - 2 * kSecondsPerDay), zone.OffsetAt(t), zone.OffsetAt(t + 2 * kSecondsPerDay)});
  };
  return MinuteRange{FloorDiv(lo + offsets(lo).first, 60), FloorDiv(hi + offsets(hi).second, 60)};
}

CivilTime MinuteOf(int64_t day, int minute_of_day) {
  CivilTime t;
  CivilFromDays(day, &t.year, &t.month, &t.day);
  t.hour = minute_of_day / 60;
  t.minute = minute_of_day % 60;
  return t;
}

}  // namespace

std::optional<int64_t> NextCronStart(const CronSpec& spec, const TimeZone& zone, int64_t from, int64_t until) {
  const MinuteRange range = LocalMinutes(zone, from, until);
  const int64_t first_day = FloorDiv(range.first, kMinutesPerDay);
  const int64_t last_day = FloorDiv(range.last, kMinutesPerDay);
  for (int64_t day = first_day; day <= last_day; ++day) {
    CivilTime date = MinuteOf(day, 0);
    if (!spec.MatchesDay(date.year, date.month, date.day)) continue;
    int minute = day == first_day ? static_cast<int>(range.first - first_day * kMinutesPerDay) : 0;
    for (; minute < kMinutesPerDay; ++minute) {
      if (!spec.hours[minute / 60]) {
        minute = minute / 60 * 60 + 59;  // skip the rest of the hour
        continue;
      }
      if (!spec.minutes[minute % 60]) continue;
      const int64_t t = zone.FromCivil(MinuteOf(day, minute));
      if (t > until) return std::nullopt;
      if (t >= from) return t;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> PreviousCronStart(const CronSpec& spec, const TimeZone& zone, int64_t at,
                                         int64_t not_before) {
  const MinuteRange range = LocalMinutes(zone, not_before, at);
  const int64_t first_day = FloorDiv(range.first, kMinutesPerDay);
  const int64_t last_day = FloorDiv(range.last, kMinutesPerDay);
  for (int64_t day = last_day; day >= first_day; --day) {
    CivilTime date = MinuteOf(day, 0);
    if (!spec.MatchesDay(date.year, date.month, date.day)) continue;
    int minute = day == last_day ? static_cast<int>(range.last - last_day * kMinutesPerDay) : kMinutesPerDay - 1;
    for (; minute >= 0; --minute) {
      if (!spec.hours[minute / 60]) {
        minute = minute / 60 * 60;  // skip the rest of the hour
        continue;
      }
      if (!spec.minutes[minute % 60]) continue;
      const int64_t t = zone.FromCivil(MinuteOf(day, minute));
      if (t < not_before) return std::nullopt;
      if (t <= at) return t;
    }
  }
  return std::nullopt;
}

}  // namespace nodehook
