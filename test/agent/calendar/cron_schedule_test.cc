// The instants a cron expression names in a zone: next and previous starts, across DST switches.
#include <catch2/catch.hpp>

#include "agent/calendar/cron_schedule.h"

using namespace nodehook;

namespace {

CronSpec Cron(const std::string& text) {
  Result<CronSpec> spec = ParseCron(text);
  REQUIRE(spec.ok());
  return spec.value();
}

TimeZone Zone(const std::string& name) {
  Result<TimeZone> zone = LoadTimeZone(name);
  REQUIRE(zone.ok());
  return zone.value();
}

constexpr int64_t kYear = 366 * kSecondsPerDay;
constexpr int64_t kDec1At22Utc = 1796162400;  // Tuesday 2026-12-01 22:00 UTC

}  // namespace

TEST_CASE("the next start of a weeknight cron in Berlin is 22:00 local, 21:00 UTC in winter") {
  CronSpec spec = Cron("0 22 * * 1-5");
  TimeZone berlin = Zone("Europe/Berlin");
  // Tuesday 23:00 local: next is Wednesday 22:00 CET.
  CHECK(NextCronStart(spec, berlin, kDec1At22Utc, kDec1At22Utc + kYear) == kDec1At22Utc + 23 * 3600);
  // Friday 4 December 22:00 CET, then Monday 7 December.
  const int64_t friday = kDec1At22Utc + 3 * kSecondsPerDay - 3600;
  CHECK(NextCronStart(spec, berlin, friday, friday + kYear) == friday);
  CHECK(NextCronStart(spec, berlin, friday + 1, friday + kYear) == friday + 3 * kSecondsPerDay);
  CHECK(PreviousCronStart(spec, berlin, friday + 3 * kSecondsPerDay - 1, friday - kYear) == friday);
  CHECK(PreviousCronStart(spec, berlin, friday, friday) == friday);
  CHECK(PreviousCronStart(spec, berlin, friday - 1, friday - 3600) == std::nullopt);
}

TEST_CASE("the next start is not found when it lies beyond the search's end") {
  CronSpec spec = Cron("0 0 29 2 *");
  TimeZone utc = TimeZone::Utc();
  CHECK(NextCronStart(spec, utc, kDec1At22Utc, kDec1At22Utc + kYear) == std::nullopt);
  CHECK(NextCronStart(spec, utc, kDec1At22Utc, kDec1At22Utc + 2 * kYear) == 1835395200);  // 2028-02-29
  CHECK(NextCronStart(Cron("0 0 30 2 *"), utc, kDec1At22Utc, kDec1At22Utc + 5 * kYear) == std::nullopt);
}

TEST_CASE("a start in the hour Berlin skips on 29 March 2026 happens when the clock jumps, once") {
  CronSpec spec = Cron("30 2 * * *");
  TimeZone berlin = Zone("Europe/Berlin");
  const int64_t jump = 1774746000;  // 01:00 UTC: 02:00 CET becomes 03:00 CEST
  const int64_t day_before = jump - kSecondsPerDay + 1800;  // 28 March 02:30 CET = 01:30 UTC
  CHECK(NextCronStart(spec, berlin, day_before, jump + kYear) == day_before);
  CHECK(NextCronStart(spec, berlin, day_before + 1, jump + kYear) == jump);
  CHECK(NextCronStart(spec, berlin, jump + 1, jump + kYear) == jump + kSecondsPerDay - 1800);  // 30 March 00:30 UTC
  CHECK(PreviousCronStart(spec, berlin, jump + 3600, jump - kYear) == jump);
}

TEST_CASE("a start in the hour Berlin repeats on 25 October 2026 happens once, at its first pass") {
  CronSpec spec = Cron("30 2 * * *");
  TimeZone berlin = Zone("Europe/Berlin");
  const int64_t back = 1792890000;  // 01:00 UTC: 03:00 CEST becomes 02:00 CET
  CHECK(NextCronStart(spec, berlin, back - 7200, back + kYear) == back - 1800);
  CHECK(NextCronStart(spec, berlin, back - 1799, back + kYear) == back + kSecondsPerDay + 1800);  // 26 Oct 01:30 UTC
  // From inside the second pass, the latest start is the first pass's.
  CHECK(PreviousCronStart(spec, berlin, back + 1800, back - kYear) == back - 1800);
  // Every minute of the repeated hour starts once, in the first pass; the second pass has none.
  CronSpec each_minute = Cron("* 2 * * *");
  CHECK(NextCronStart(each_minute, berlin, back - 60, back + kYear) == back - 60);
  CHECK(NextCronStart(each_minute, berlin, back, back + kYear) == back + kSecondsPerDay);  // 26 Oct 02:00 CET
}

TEST_CASE("starts honour a zone with a half-hour offset") {
  CronSpec spec = Cron("0 9 * * *");
  TimeZone kolkata = Zone("Asia/Kolkata");
  // 09:00 IST = 03:30 UTC; from 2026-12-01 22:00 UTC the next is 2 December 03:30 UTC.
  CHECK(NextCronStart(spec, kolkata, kDec1At22Utc, kDec1At22Utc + kYear) == kDec1At22Utc + 5 * 3600 + 1800);
  CHECK(PreviousCronStart(spec, kolkata, kDec1At22Utc, kDec1At22Utc - kYear) ==
        kDec1At22Utc + 5 * 3600 + 1800 - kSecondsPerDay);
}
