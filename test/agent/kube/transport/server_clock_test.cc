// The API server's clock from Date headers: the offset it sets (the IMF-fixdate parser is
// agent/base/utc_time.h's, tested with it).
#include <catch2/catch.hpp>

#include "agent/kube/transport/server_clock.h"

namespace nodehook {

TEST_CASE("the clock takes the Date's offset, at the middle of its second") {
  DateHeaderClock clock;
  CHECK(clock.offset_ms() == 0);
  clock.Observe(10'000, 4'000);  // the server is 6 s ahead
  CHECK(clock.offset_ms() == 6'500);
}

TEST_CASE("one odd Date moves nothing; a real change of the clocks is followed within half the window") {
  DateHeaderClock clock;
  for (int i = 0; i < 10; ++i) clock.Observe(10'000 + i * 1'000, 4'000 + i * 1'000);  // 6 s ahead
  REQUIRE(clock.offset_ms() == 6'500);
  clock.Observe(86'400'000, 20'000);  // a day ahead: a proxy's clock, a cached answer
  CHECK(clock.offset_ms() == 6'500);
  clock.Observe(0, 21'000);  // far behind
  CHECK(clock.offset_ms() == 6'500);
  // The server's clock was stepped back 2 s: after half the window's answers, that is the clock.
  int answers = 0;
  while (clock.offset_ms() != 4'500) {
    clock.Observe(30'000 + answers * 1'000, 26'000 + answers * 1'000);
    REQUIRE(++answers <= static_cast<int>(DateHeaderClock::kDateWindow / 2 + 1));
  }
}

}  // namespace nodehook
