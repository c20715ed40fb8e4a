// The API server's clock from Date headers: the offset it sets (the IMF-fixdate parser is
// agent/base/utc_time.h's, tested with it).
#include <catch2/catch.hpp>

#include "agent/kube/transport/server_clock.h"

namespace nodehook {

TEST_CASE("the clock follows the latest Date, at the middle of its second") {
  DateHeaderClock clock;
  CHECK(clock.offset_ms() == 0);
  clock.Observe(10'000, 4'000);  // the server is 6 s ahead
  CHECK(clock.offset_ms() == 6'500);
  clock.Observe(10'000, 12'000);  // now it is 2 s behind
  CHECK(clock.offset_ms() == -1'500);
}

}  // namespace nodehook
