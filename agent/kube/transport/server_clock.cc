#include "agent/kube/transport/server_clock.h"

#include <chrono>

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
  // IMF-fixdate, exactly: "Sun, 06 Nov 1994 08:49:37 GMT" (29 characters).
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text.substr(3, 2) != ", " || text.substr(25) != " GMT") return -1;
  auto digits = [&](size_t at, size_t n) -> int {
    int value = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return -1;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  if (text[7] != ' ' || text[11] != ' ' || text[16] != ' ' || text[19] != ':' || text[22] != ':') return -1;
  const int day = digits(5, 2), year = digits(12, 4), hour = digits(17, 2), minute = digits(20, 2),
            second = digits(23, 2);
  int m = 0;
  while (m < 12 && text.substr(8, 3) != kMonths[m]) ++m;
  if (m == 12 || day < 1 || day > 31 || year < 1970 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60) {
    return -1;
  }
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(m + 1), static_cast<unsigned>(day));
  return ((days * 24 + hour) * 60 + minute) * 60'000 + static_cast<int64_t>(second) * 1000;
}

}  // namespace nodehook
