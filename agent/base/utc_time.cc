#include "agent/base/utc_time.h"

#include <cstdio>

namespace nodehook {
namespace {

constexpr int64_t kMillisPerDay = 86'400'000;

// a / b rounded towards minus infinity (b > 0).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); }

// Exactly `count` decimal digits at `pos` (the fields of these formats have fixed widths).
bool FixedDigits(std::string_view text, size_t pos, size_t count, int* out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return true;
}

// A TimePoint's fields in UTC (month 1-12; times before 1970 too).
struct UtcFields { int year, month, day, hour, minute, second, millis; };

UtcFields SplitUtc(TimePoint t) {
  const int64_t ms = ToMillis(t);
  const int64_t days = FloorDiv(ms, kMillisPerDay);
  const int64_t rest = ms - days * kMillisPerDay;
  UtcFields f{};
  CivilFromDays(days, &f.year, &f.month, &f.day);
  f.hour = static_cast<int>(rest / 3'600'000);
  f.minute = static_cast<int>(rest / 60'000 % 60);
  f.second = static_cast<int>(rest / 1000 % 60);
  f.millis = static_cast<int>(rest % 1000);
  return f;
}

int64_t MillisOf(int year, int month, int day, int hour, int minute, int second) {
  return ((DaysFromCivil(year, month, day) * 24 + hour) * 60 + minute) * 60'000 + int64_t{second} * 1000;
}

}  // namespace

int64_t DaysFromCivil(int year, int month, int day) {
  const int64_t y = static_cast<int64_t>(year) - (month <= 2 ? 1 : 0);
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;                                            // [0, 399]
  const int64_t mp = (month + 9) % 12;                                          // March = 0
  const int64_t doy = (153 * mp + 2) / 5 + day - 1;                             // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                    // [0, 146096]
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t days, int* year, int* month, int* day) {
  const int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = static_cast<int>(yoe + era * 400 + (*month <= 2 ? 1 : 0));
}

std::string Rfc3339Millis(TimePoint t) {
  UtcFields f = SplitUtc(t);
  char buf[80];  // room for any int the compiler thinks the fields might hold
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", f.year, f.month, f.day, f.hour, f.minute,
                f.second, f.millis);
  return buf;
}

std::string MicroTime(TimePoint t) {
  std::string text = Rfc3339Millis(t);
  return text.insert(text.size() - 1, "000");
}

std::string BasicUtcStamp(TimePoint t) {
  UtcFields f = SplitUtc(t);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ", f.year, f.month, f.day, f.hour, f.minute, f.second);
  return buf;
}

Result<TimePoint> ParseRfc3339(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const bool shaped = text.size() >= 19 && text[4] == '-' && text[7] == '-' && (text[10] == 'T' || text[10] == 't') &&
                      text[13] == ':' && text[16] == ':';
  if (!shaped || !FixedDigits(text, 0, 4, &year) || !FixedDigits(text, 5, 2, &month) ||
      !FixedDigits(text, 8, 2, &day) || !FixedDigits(text, 11, 2, &hour) || !FixedDigits(text, 14, 2, &minute) ||
      !FixedDigits(text, 17, 2, &second)) {
    return InvalidError("expected an RFC 3339 time like 2024-01-02T03:04:05Z, got '" + text + "'");
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return InvalidError("RFC 3339 time out of range: '" + text + "'");
  }
  size_t pos = 19;
  int64_t millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    int64_t scale = 100;
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, scale /= 10) {
      millis += (text[pos] - '0') * scale;
    }
  }
  int offset_minutes = 0;
  std::string_view zone = std::string_view(text).substr(pos);
  int hours = 0, minutes = 0;
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' &&
             FixedDigits(zone, 1, 2, &hours) && FixedDigits(zone, 4, 2, &minutes)) {
    offset_minutes = (zone[0] == '-' ? -1 : 1) * (hours * 60 + minutes);
  } else {
    return InvalidError("expected an RFC 3339 time zone (Z or +hh:mm) in '" + text + "'");
  }
  return FromMillis(MillisOf(year, month, day, hour, minute, second) - int64_t{offset_minutes} * 60'000 + millis);
}

int64_t ParseHttpDate(std::string_view text) {
  // IMF-fixdate, exactly: "Sun, 06 Nov 1994 08:49:37 GMT" (29 characters).
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text.substr(3, 2) != ", " || text.substr(25) != " GMT") return -1;
  if (text[7] != ' ' || text[11] != ' ' || text[16] != ' ' || text[19] != ':' || text[22] != ':') return -1;
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  if (!FixedDigits(text, 5, 2, &day) || !FixedDigits(text, 12, 4, &year) || !FixedDigits(text, 17, 2, &hour) ||
      !FixedDigits(text, 20, 2, &minute) || !FixedDigits(text, 23, 2, &second)) {
    return -1;
  }
  int m = 0;
  while (m < 12 && text.substr(8, 3) != kMonths[m]) ++m;
  if (m == 12 || day < 1 || day > 31 || year < 1970 || hour > 23 || minute > 59 || second > 60) return -1;
  return MillisOf(year, m + 1, day, hour, minute, second);
}

}  // namespace nodehook
