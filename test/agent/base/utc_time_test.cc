// Dates in UTC as text: what the agent writes (logs, Events, Leases) and reads (exec plugins'
// expiry, Leases' renewTime, the API server's Date), and the day arithmetic under them.
#include <catch2/catch.hpp>

#include <regex>

#include "agent/base/utc_time.h"

namespace nodehook {

TEST_CASE("days since 1970 and back agree, before 1970 and across leap days") {
  CHECK(DaysFromCivil(1970, 1, 1) == 0);
  CHECK(DaysFromCivil(1969, 12, 31) == -1);
  CHECK(DaysFromCivil(2000, 3, 1) - DaysFromCivil(2000, 2, 28) == 2);
  for (int64_t days : {-719468, -1, 0, 59, 10957, 20000, 2932896}) {
    int y = 0, m = 0, d = 0;
    CivilFromDays(days, &y, &m, &d);
    CHECK(DaysFromCivil(y, m, d) == days);
  }
}

TEST_CASE("times are written as RFC 3339 in UTC: milliseconds for logs, microseconds for Kubernetes") {
  CHECK(Rfc3339Millis(FromMillis(1'700'000'000'123)) == "2023-11-14T22:13:20.123Z");
  CHECK(MicroTime(FromMillis(1'700'000'000'123)) == "2023-11-14T22:13:20.123000Z");
  CHECK(MicroTime(FromMillis(-1)) == "1969-12-31T23:59:59.999000Z");
  CHECK(std::regex_match(MicroTime(FromMillis(5)), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)")));
  CHECK(BasicUtcStamp(FromMillis(1'700'000'000'123)) == "20231114T221320Z");
}

TEST_CASE("RFC 3339 times with fractions and offsets are read exactly") {
  CHECK(ToMillis(*ParseRfc3339("2023-11-14T22:13:20Z")) == 1'700'000'000'000);
  CHECK(ToMillis(*ParseRfc3339("2023-11-14T22:13:20.25Z")) == 1'700'000'000'250);
  CHECK(ToMillis(*ParseRfc3339("2023-11-15T00:13:20+02:00")) == 1'700'000'000'000);
  CHECK(ToMillis(*ParseRfc3339(MicroTime(FromMillis(1'700'000'000'123)))) == 1'700'000'000'123);
  CHECK_FALSE(ParseRfc3339("2023-11-14 22:13:20").ok());
  CHECK_FALSE(ParseRfc3339("2023-11-14T22:13:20").ok());
  CHECK_FALSE(ParseRfc3339("2023-13-14T22:13:20Z").ok());
}

TEST_CASE("an IMF-fixdate reads as Unix milliseconds; anything else is refused") {
  CHECK(ParseHttpDate("Thu, 01 Jan 1970 00:00:00 GMT") == 0);
  CHECK(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777000);
  CHECK(ParseHttpDate("Tue, 01 Dec 2026 22:40:21 GMT") == 1796164821000);
  CHECK(ParseHttpDate("Sun, 29 Feb 2032 23:59:60 GMT") > 0);  // a leap second still parses
  CHECK(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT") == -1);  // RFC 850: obsolete
  CHECK(ParseHttpDate("Sun Nov  6 08:49:37 1994") == -1);        // asctime: obsolete
  CHECK(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 UTC") == -1);
  CHECK(ParseHttpDate("Sun, 06 Xyz 1994 08:49:37 GMT") == -1);
  CHECK(ParseHttpDate("Sun, 06 Nov 1994 24:49:37 GMT") == -1);
  CHECK(ParseHttpDate("") == -1);
}

}  // namespace nodehook
