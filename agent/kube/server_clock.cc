#include "agent/kube/server_clock.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

namespace nodehook {
namespace {

int64_t LocalMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Days from 1970-01-01 to a civil date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

int64_t DateHeaderClock::NowMs() const { return LocalMs() + offset_ms(); }

DateHeaderClock& ApiServerClock() {
  static DateHeaderClock clock;
  return clock;
}

int64_t ParseHttpDate(std::string_view text) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::string s(text);
  char weekday[4] = {}, month[4] = {}, zone[4] = {};
  int day = 0, year = 0, hour = 0, minute = 0, second = 0;
  if (std::sscanf(s.c_str(), "%3s %d %3s %d %d:%d:%d %3s", weekday, &day, month, &year, &hour, &minute, &second,
                  zone) != 8 ||
      std::strcmp(zone, "GMT") != 0) {
    return -1;
  }
  int m = 0;
  while (m < 12 && std::strcmp(kMonths[m], month) != 0) ++m;
  if (m == 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || year < 1970) return -1;
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(m + 1), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60'000 + static_cast<int64_t>(second) * 1000;
}

}  // namespace nodehook
