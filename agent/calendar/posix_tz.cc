#include "agent/calendar/posix_tz.h"

#include <cctype>

#include "agent/calendar/civil_time.h"

namespace nodehook {
namespace {

class TzScanner {
 public:
  explicit TzScanner(const std::string& text) : s_(text) {}

  bool AtEnd() const { return i_ == s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[i_]; }
  bool Take(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }

  // "CET" (3+ letters) or "<+0530>" (3+ of letters, digits, + and -).
  bool Name(std::string* out) {
    size_t begin = i_;
    if (Take('<')) {
      while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '+' || Peek() == '-')) ++i_;
      *out = s_.substr(begin + 1, i_ - begin - 1);
      return Take('>') && out->size() >= 3;
    }
    while (!AtEnd() && std::isalpha(static_cast<unsigned char>(Peek()))) ++i_;
    *out = s_.substr(begin, i_ - begin);
    return out->size() >= 3;
  }

  // [+-]h[h][:mm[:ss]], hours up to `max_hours`, as signed seconds.
  bool Duration(int max_hours, int* out) {
    int sign = 1;
    if (Take('-')) {
      sign = -1;
    } else {
      (void)Take('+');  // an explicit plus is optional
    }
    int hours = 0;
    if (!Number(3, &hours) || hours > max_hours) return false;
    int minutes = 0;
    int seconds = 0;
    if (Take(':') && (!Number(2, &minutes) || minutes > 59)) return false;
    if (Take(':') && (!Number(2, &seconds) || seconds > 59)) return false;
    *out = sign * (hours * 3600 + minutes * 60 + seconds);
    return true;
  }

  bool Number(int max_digits, int* out) {
    int digits = 0;
    int value = 0;
    while (digits < max_digits && std::isdigit(static_cast<unsigned char>(Peek()))) {
      value = value * 10 + (s_[i_++] - '0');
      ++digits;
    }
    *out = value;
    return digits > 0;
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

bool ReadDate(TzScanner& in, PosixTzRule::Date* out) {
  using Kind = PosixTzRule::Date::Kind;
  if (in.Take('M')) {
    out->kind = Kind::kMonthWeekDay;
    if (!in.Number(2, &out->month) || out->month < 1 || out->month > 12 || !in.Take('.')) return false;
    if (!in.Number(1, &out->week) || out->week < 1 || out->week > 5 || !in.Take('.')) return false;
    if (!in.Number(1, &out->weekday) || out->weekday > 6) return false;
  } else if (in.Take('J')) {
    out->kind = Kind::kJulian1;
    if (!in.Number(3, &out->day) || out->day < 1 || out->day > 365) return false;
  } else {
    out->kind = Kind::kDayOfYear0;
    if (!in.Number(3, &out->day) || out->day > 365) return false;
  }
  return !in.Take('/') || in.Duration(167, &out->seconds);
}

// Days since the epoch of the rule date in `year`.
int64_t DayOf(const PosixTzRule::Date& date, int year) {
  using Kind = PosixTzRule::Date::Kind;
  const int64_t jan1 = DaysFromCivil(year, 1, 1);
  switch (date.kind) {
    case Kind::kJulian1:
      return jan1 + date.day - 1 + (IsLeapYear(year) && date.day >= 60 ? 1 : 0);
    case Kind::kDayOfYear0:
      return jan1 + date.day;
    case Kind::kMonthWeekDay:
      break;
  }
  const int64_t first = DaysFromCivil(year, date.month, 1);
  int day = 1 + (date.weekday - WeekdayFromDays(first) + 7) % 7 + (date.week - 1) * 7;
  while (day > DaysInMonth(year, date.month)) day -= 7;  // week 5: the last one
  return first + day - 1;
}

}  // namespace

PosixTzRule::Local PosixTzRule::At(int64_t unix_seconds) const {
  if (!has_dst) return Local{std_offset, false, &std_abbreviation};
  const int year = CivilFromSeconds(unix_seconds + std_offset).year;
  // Each change happens at a local time in the offset in force before it.
  const int64_t starts = DayOf(start, year) * kSecondsPerDay + start.seconds - std_offset;
  const int64_t ends = DayOf(end, year) * kSecondsPerDay + end.seconds - dst_offset;
  bool dst = starts < ends ? (starts <= unix_seconds && unix_seconds < ends)    // northern hemisphere
                           : !(ends <= unix_seconds && unix_seconds < starts);  // southern: DST spans New Year
  return dst ? Local{dst_offset, true, &dst_abbreviation} : Local{std_offset, false, &std_abbreviation};
}

Result<PosixTzRule> ParsePosixTz(const std::string& text) {
  auto bad = [&](const std::string& why) { return InvalidError("TZ rule \"" + text + "\": " + why); };
  TzScanner in(text);
  PosixTzRule rule;
  int west = 0;
  if (!in.Name(&rule.std_abbreviation)) return bad("expected a zone abbreviation such as CET or <+0530>");
  if (!in.Duration(24, &west)) return bad("expected the UTC offset after " + rule.std_abbreviation);
  rule.std_offset = -west;
  if (in.AtEnd()) return rule;
  rule.has_dst = true;
  if (!in.Name(&rule.dst_abbreviation)) return bad("expected a daylight-time abbreviation");
  rule.dst_offset = rule.std_offset + 3600;
  if (in.Peek() != ',') {
    if (!in.Duration(24, &west)) return bad("expected the daylight-time offset or a rule");
    rule.dst_offset = -west;
  }
  if (!in.Take(',') || !ReadDate(in, &rule.start) || !in.Take(',') || !ReadDate(in, &rule.end)) {
    return bad("expected ,start[/time],end[/time] with dates Mm.w.d, Jn or n");
  }
  if (!in.AtEnd()) return bad("unexpected text after the rule");
  return rule;
}

}  // namespace nodehook
