#include <catch2/catch.hpp>

#include <limits>

#include "agent/base/duration_math.h"

using namespace nodehook;

TEST_CASE("milliseconds beyond what a Duration holds saturate instead of wrapping") {
  REQUIRE(SaturatingMillis(1e33) == Duration::max());
  REQUIRE(SaturatingMillis(9223372036854775808.0) == Duration::max());
  REQUIRE(SaturatingMillis(std::numeric_limits<double>::infinity()) == Duration::max());
  REQUIRE(SaturatingMillis(-1e33) == Duration::min());
  REQUIRE(SaturatingMillis(-std::numeric_limits<double>::infinity()) == Duration::min());
  REQUIRE(SaturatingMillis(std::numeric_limits<double>::quiet_NaN()) == Duration::zero());
  REQUIRE(SaturatingMillis(1500.9) == Duration(1500));
  REQUIRE(SaturatingMillis(-9223372036854775808.0) == Duration::min());
}

TEST_CASE("seconds from untrusted input are clamped to [0, max]") {
  const Duration day = std::chrono::hours(24);
  REQUIRE(ClampedSeconds(1e33, day) == day);
  REQUIRE(ClampedSeconds(86400, day) == day);
  REQUIRE(ClampedSeconds(-5, day) == Duration::zero());
  REQUIRE(ClampedSeconds(std::numeric_limits<double>::quiet_NaN(), day) == Duration::zero());
  REQUIRE(ClampedSeconds(2.5, day) == Duration(2500));
}
