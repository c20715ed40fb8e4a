// Calendar inputs as a config or a damaged zoneinfo file might give them: a cron expression, a
// POSIX TZ rule, or TZif bytes (chosen by the first byte), each then used at times around now.
// Errors must be reported, never crash or loop; FromCivil must invert ToCivil where it can.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "agent/calendar/cron_schedule.h"

namespace {

constexpr int64_t kNow = 1796162400;  // 2026-12-01 22:00 UTC
constexpr int64_t kYear = 366 * 24 * 3600;

void UseZone(const nodehook::TimeZone& zone) {
  for (int64_t t = kNow - 40 * kYear; t < kNow + 80 * kYear; t += 7 * kYear + 12345) {
    nodehook::LocalTime local = zone.ToCivil(t);
    int64_t back = zone.FromCivil(local.civil);
    // Either the same instant, or (in a repeated hour) an earlier one showing the same wall clock.
    if (back > t || zone.ToCivil(back).civil != local.civil) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      nodehook::Result<nodehook::CronSpec> spec = nodehook::ParseCron(text);
      if (!spec.ok()) return 0;
      nodehook::TimeZone utc = nodehook::TimeZone::Utc();
      (void)nodehook::NextCronStart(*spec, utc, kNow, kNow + kYear);
      (void)nodehook::PreviousCronStart(*spec, utc, kNow, kNow - kYear);
      break;
    }
    case 1: {
      nodehook::Result<nodehook::PosixTzRule> rule = nodehook::ParsePosixTz(text);
      if (rule.ok()) {
        for (int64_t t = kNow - kYear; t < kNow + kYear; t += 86400 * 7) (void)rule->At(t);
      }
      break;
    }
    default: {
      nodehook::Result<nodehook::TimeZone> zone = nodehook::TimeZone::FromTzif("fuzz", text);
      if (zone.ok()) UseZone(*zone);
      break;
    }
  }
  return 0;
}
