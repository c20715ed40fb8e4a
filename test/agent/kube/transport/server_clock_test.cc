// The API server's clock from Date headers: the IMF-fixdate parser and the offset it sets.
#include <catch2/catch.hpp>

#include "agent/kube/transport/server_clock.h"

namespace nodehook {

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

TEST_CASE("the clock follows the latest Date, at the middle of its second") {
  DateHeaderClock clock;
  CHECK(clock.offset_ms() == 0);
  clock.Observe(10'000, 4'000);  // the server is 6 s ahead
  CHECK(clock.offset_ms() == 6'500);
  clock.Observe(10'000, 12'000);  // now it is 2 s behind
  CHECK(clock.offset_ms() == -1'500);
}

}  // namespace nodehook
