// Cron expressions: what each field accepts, Vixie's day rule, and the errors.
#include <catch2/catch.hpp>

#include "agent/calendar/cron.h"
#include "test/agent/calendar/require_ok.h"

using namespace nodehook;

namespace {

CronSpec Parse(const std::string& text) { return RequireOk(ParseCron(text), text); }

std::string ErrorOf(const std::string& text) {
  Result<CronSpec> spec = ParseCron(text);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == StatusCode::kInvalid);
  return spec.status().message();
}

template <size_t N>
std::vector<int> Bits(const std::bitset<N>& bits) {
  std::vector<int> on;
  for (size_t i = 0; i < N; ++i) {
    if (bits[i]) on.push_back(static_cast<int>(i));
  }
  return on;
}

CivilTime At(int year, int month, int day, int hour = 0, int minute = 0) {
  return CivilTime{year, month, day, hour, minute, 0};
}

}  // namespace

TEST_CASE("cron reads weeknights at 22:00 as minute 0, hour 22, Monday to Friday") {
  CronSpec spec = Parse("0 22 * * 1-5");
  CHECK(Bits(spec.minutes) == std::vector<int>{0});
  CHECK(Bits(spec.hours) == std::vector<int>{22});
  CHECK(Bits(spec.days_of_week) == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(spec.months.count() == 12);
  CHECK(spec.days_of_month.count() == 31);
  CHECK(spec.Matches(At(2026, 12, 4, 22, 0)));        // a Friday
  CHECK_FALSE(spec.Matches(At(2026, 12, 5, 22, 0)));  // a Saturday
  CHECK_FALSE(spec.Matches(At(2026, 12, 4, 22, 1)));
}

TEST_CASE("cron steps count from the start of their range") {
  CHECK(Bits(Parse("*/15 * * * *").minutes) == std::vector<int>{0, 15, 30, 45});
  CHECK(Bits(Parse("10-40/10 * * * *").minutes) == std::vector<int>{10, 20, 30, 40});
  CHECK(Bits(Parse("0 */7 * * *").hours) == std::vector<int>{0, 7, 14, 21});
  CHECK(Bits(Parse("0 0 */10 * *").days_of_month) == std::vector<int>{1, 11, 21, 31});
  CHECK(Bits(Parse("1,2,5-7,30-59/29 * * * *").minutes) == std::vector<int>{1, 2, 5, 6, 7, 30, 59});
}

TEST_CASE("cron month and weekday names are case-insensitive and make ranges") {
  CronSpec spec = Parse("0 0 * jan-MAR,Dec sun,Sat");
  CHECK(Bits(spec.months) == std::vector<int>{1, 2, 3, 12});
  CHECK(Bits(spec.days_of_week) == std::vector<int>{0, 6});
  CHECK(Bits(Parse("0 0 * * MON-fri").days_of_week) == std::vector<int>{1, 2, 3, 4, 5});
}

TEST_CASE("cron day of week 7 is Sunday, like 0") {
  CHECK(Bits(Parse("0 0 * * 7").days_of_week) == std::vector<int>{0});
  CHECK(Bits(Parse("0 0 * * 5-7").days_of_week) == std::vector<int>{0, 5, 6});
  CHECK(Parse("0 0 * * 7").Matches(At(2026, 12, 6)));  // a Sunday
}

TEST_CASE("cron matches a day when either restricted day field does, as Vixie cron") {
  CronSpec spec = Parse("0 0 1 * MON");
  CHECK(spec.MatchesDay(2026, 12, 1));   // the 1st, a Tuesday
  CHECK(spec.MatchesDay(2026, 12, 7));   // a Monday
  CHECK_FALSE(spec.MatchesDay(2026, 12, 8));
}

TEST_CASE("cron needs both day fields when one starts with a star, even a stepped one") {
  CronSpec spec = Parse("0 0 */2 * MON");  // odd days that are Mondays
  CHECK(spec.MatchesDay(2026, 12, 7));
  CHECK_FALSE(spec.MatchesDay(2026, 12, 14));  // a Monday, even
  CHECK_FALSE(spec.MatchesDay(2026, 12, 1));   // odd, a Tuesday
  CronSpec first = Parse("0 0 1 * *");
  CHECK(first.MatchesDay(2026, 12, 1));
  CHECK_FALSE(first.MatchesDay(2026, 12, 7));
}

TEST_CASE("cron restricts the month") {
  CronSpec spec = Parse("0 0 * 2 *");
  CHECK(spec.MatchesDay(2028, 2, 29));
  CHECK_FALSE(spec.MatchesDay(2028, 3, 1));
}

TEST_CASE("cron accepts tabs and runs of spaces between fields") {
  CHECK(Bits(Parse("  5\t4   * *  *  ").hours) == std::vector<int>{4});
}

TEST_CASE("cron errors name the field and what it expected") {
  CHECK(ErrorOf("0 22 * *") ==
        "expected 5 fields (minute hour day-of-month month day-of-week), e.g. \"0 22 * * 1-5\", got 4");
  CHECK(ErrorOf("@daily").find("expected 5 fields") == 0);
  CHECK(ErrorOf("60 * * * *") ==
        "minute field \"60\": expected *, a number from 0 to 59, a range a-b, a step */n or a-b/n, or a list of "
        "these separated by commas, e.g. 0, 30 or */15");
  CHECK(ErrorOf("* 24 * * *").find("hour field \"24\": expected *, a number from 0 to 23,") == 0);
  CHECK(ErrorOf("* * 0 * *").find("day-of-month field \"0\": expected *, a number from 1 to 31,") == 0);
  CHECK(ErrorOf("* * 32 * *").find("day-of-month field \"32\"") == 0);
  CHECK(ErrorOf("* * * 13 *").find("month field \"13\": expected *, a number from 1 to 12 or a name,") == 0);
  CHECK(ErrorOf("* * * * 8").find("day-of-week field \"8\": expected *, a number from 0 to 7 or a name,") == 0);
  CHECK(ErrorOf("* * * * FOO").find("day-of-week field \"FOO\"") == 0);
  CHECK(ErrorOf("* * * JANUARY *").find("month field \"JANUARY\"") == 0);
  CHECK(ErrorOf("* * * * MON-XX").find("day-of-week field \"MON-XX\"") == 0);
  CHECK(ErrorOf("30-10 * * * *") == "minute field \"30-10\": a range must go upwards (a-b with a <= b)");
  CHECK(ErrorOf("*/0 * * * *") == "minute field \"*/0\": expected a step from 1 to 60 after /");
  CHECK(ErrorOf("* */25 * * *") == "hour field \"*/25\": expected a step from 1 to 24 after /");
  CHECK(ErrorOf("5/15 * * * *") == "minute field \"5/15\": a step needs * or a range before it, e.g. */15 or 0-30/10");
  CHECK(ErrorOf("1,,2 * * * *").find("minute field \"1,,2\": expected") == 0);
  CHECK(ErrorOf("1, * * * *").find("minute field \"1,\": expected") == 0);
  CHECK(ErrorOf("-5 * * * *").find("minute field \"-5\": expected") == 0);
  CHECK(ErrorOf("1- * * * *").find("minute field \"1-\": expected") == 0);
  CHECK(ErrorOf("? * * * *").find("minute field \"?\": expected") == 0);
  CHECK(ErrorOf("99999 * * * *").find("minute field \"99999\"") == 0);
}
