// Time zones from TZif files: the machine's zoneinfo (tzdata, installed by test/install-deps.sh)
// at known switch dates, hand-built files for each part of the format, and the names refused.
#include <catch2/catch.hpp>

#include <fstream>

#include "agent/calendar/time_zone.h"
#include "test/agent/calendar/require_ok.h"
#include "test/agent/calendar/tzif_builder.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

TimeZone Load(const std::string& name) { return RequireOk(LoadTimeZone(name), name); }

TimeZone FromBytes(const TzifContent& content) {
  return RequireOk(TimeZone::FromTzif("Test/Zone", BuildTzif(content)), "Test/Zone");
}

// 2026 switches (UTC): Europe/Berlin 29 March and 25 October at 01:00, America/New_York
// 8 March at 07:00 and 1 November at 06:00.
constexpr int64_t kBerlinSummer2026 = 1774746000;
constexpr int64_t kBerlinWinter2026 = 1792890000;
constexpr int64_t kNewYorkSummer2026 = 1772953200;
constexpr int64_t kNewYorkWinter2026 = 1793512800;

void CheckSwitch(const TimeZone& zone, int64_t at, int before, int after, const std::string& before_abbr,
                 const std::string& after_abbr) {
  INFO(zone.name() << " at " << at);
  LocalTime just_before = zone.ToCivil(at - 1);
  LocalTime just_after = zone.ToCivil(at);
  CHECK(just_before.utc_offset_seconds == before);
  CHECK(just_before.abbreviation == before_abbr);
  CHECK(just_after.utc_offset_seconds == after);
  CHECK(just_after.abbreviation == after_abbr);
  CHECK(just_after.dst != just_before.dst);
}

}  // namespace

TEST_CASE("Europe/Berlin switches to CEST on 29 March 2026 and back on 25 October at 01:00 UTC") {
  TimeZone berlin = Load("Europe/Berlin");
  CheckSwitch(berlin, kBerlinSummer2026, 3600, 7200, "CET", "CEST");
  CheckSwitch(berlin, kBerlinWinter2026, 7200, 3600, "CEST", "CET");
  CHECK(berlin.ToCivil(kBerlinSummer2026 - 1).civil.ToString() == "2026-03-29 01:59:59");
  CHECK(berlin.ToCivil(kBerlinSummer2026).civil.ToString() == "2026-03-29 03:00:00");
  CHECK(berlin.ToCivil(kBerlinWinter2026 - 1).civil.ToString() == "2026-10-25 02:59:59");
  CHECK(berlin.ToCivil(kBerlinWinter2026).civil.ToString() == "2026-10-25 02:00:00");
}

TEST_CASE("America/New_York switches on 8 March and 1 November 2026") {
  TimeZone new_york = Load("America/New_York");
  CheckSwitch(new_york, kNewYorkSummer2026, -5 * 3600, -4 * 3600, "EST", "EDT");
  CheckSwitch(new_york, kNewYorkWinter2026, -4 * 3600, -5 * 3600, "EDT", "EST");
  CHECK(new_york.ToCivil(kNewYorkSummer2026).civil.ToString() == "2026-03-08 03:00:00");
  CHECK(new_york.ToCivil(kNewYorkWinter2026).civil.ToString() == "2026-11-01 01:00:00");
}

TEST_CASE("Asia/Kolkata is +05:30 all year and UTC is 0") {
  TimeZone kolkata = Load("Asia/Kolkata");
  for (int64_t t : {kBerlinSummer2026, kBerlinWinter2026, int64_t{4109878800}}) {
    CHECK(kolkata.OffsetAt(t) == 5 * 3600 + 1800);
    CHECK_FALSE(kolkata.ToCivil(t).dst);
  }
  CHECK(kolkata.ToCivil(1796162400).civil.ToString() == "2026-12-02 03:30:00");
  TimeZone utc = Load("UTC");
  CHECK(utc.ToCivil(1796162400).civil.ToString() == "2026-12-01 22:00:00");
  CHECK(utc.ToCivil(1796162400).abbreviation == "UTC");
  TimeZone etc_utc = Load("Etc/UTC");  // read from its file
  CHECK(etc_utc.OffsetAt(kBerlinSummer2026) == 0);
  CHECK(etc_utc.ToCivil(1796162400).civil.ToString() == "2026-12-01 22:00:00");
}

TEST_CASE("beyond the transitions a file lists, the footer rule gives the switches (Berlin in 2100)") {
  TimeZone berlin = Load("Europe/Berlin");
  CheckSwitch(berlin, 4109878800, 3600, 7200, "CET", "CEST");  // 28 March 2100, 01:00 UTC
  CheckSwitch(berlin, 4128627600, 7200, 3600, "CEST", "CET");  // 31 October 2100
  CheckSwitch(berlin, 7265725200, 3600, 7200, "CET", "CEST");  // 30 March 2200
}

TEST_CASE("a southern zone is on daylight time across New Year (Australia/Sydney)") {
  TimeZone sydney = Load("Australia/Sydney");
  CHECK(sydney.OffsetAt(1768435200) == 11 * 3600);  // 2026-01-15
  CHECK(sydney.OffsetAt(1782864000) == 10 * 3600);  // 2026-07-01
  CHECK(sydney.OffsetAt(4103654400) == 11 * 3600);  // 2100-01-15, from the footer
  CHECK(sydney.OffsetAt(4118169600) == 10 * 3600);  // 2100-07-02
}

TEST_CASE("FromCivil maps a skipped wall-clock time to the end of the gap and a repeated one to its first instant") {
  TimeZone berlin = Load("Europe/Berlin");
  CHECK(berlin.FromCivil({2026, 12, 1, 23, 0, 0}) == 1796162400);
  CHECK(berlin.FromCivil({2026, 3, 29, 1, 59, 0}) == kBerlinSummer2026 - 60);
  CHECK(berlin.FromCivil({2026, 3, 29, 2, 0, 0}) == kBerlinSummer2026);   // 02:00 to 02:59 never happen
  CHECK(berlin.FromCivil({2026, 3, 29, 2, 30, 0}) == kBerlinSummer2026);
  CHECK(berlin.FromCivil({2026, 3, 29, 3, 0, 0}) == kBerlinSummer2026);
  CHECK(berlin.FromCivil({2026, 3, 29, 3, 1, 0}) == kBerlinSummer2026 + 60);
  CHECK(berlin.FromCivil({2026, 10, 25, 2, 30, 0}) == kBerlinWinter2026 - 1800);  // 02:30 CEST, not CET
  CHECK(berlin.FromCivil({2026, 10, 25, 3, 0, 0}) == kBerlinWinter2026 + 3600);
  TimeZone new_york = Load("America/New_York");
  CHECK(new_york.FromCivil({2026, 3, 8, 2, 30, 0}) == kNewYorkSummer2026);
  CHECK(new_york.FromCivil({2026, 11, 1, 1, 30, 0}) == kNewYorkWinter2026 - 1800);
}

TEST_CASE("FromCivil inverts ToCivil every quarter hour of 2026, except the repeated hour's second pass") {
  for (const char* name : {"Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"}) {
    TimeZone zone = Load(name);
    int repeated = 0;
    for (int64_t t = 1767225600; t < 1798761600; t += 900) {
      int64_t back = zone.FromCivil(zone.ToCivil(t).civil);
      if (back != t) {
        ++repeated;
        INFO(name << " " << zone.ToCivil(t).civil.ToString());
        CHECK(back == t - 3600);  // the same wall clock an hour earlier
      }
    }
    CHECK(repeated == (std::string(name) == "Asia/Kolkata" ? 0 : 4));
  }
}

TEST_CASE("a version 1 file is read from its 32-bit data") {
  TzifContent c;
  c.version = '\0';
  c.types = {{0, false, "AAA"}, {5400, true, "BBB"}};
  c.transitions = {1000000, 2000000};
  c.type_indices = {1, 0};
  TimeZone zone = FromBytes(c);
  CHECK(zone.OffsetAt(999999) == 0);  // before the first transition: type 0
  CHECK(zone.ToCivil(1000000).abbreviation == "BBB");
  CHECK(zone.OffsetAt(1999999) == 5400);
  CHECK(zone.OffsetAt(2000000) == 0);
  CHECK(zone.OffsetAt(4000000000) == 0);  // no footer: the last type stays
}

TEST_CASE("a version 2 file without transitions follows its footer's Mm.w.d rules") {
  TzifContent c;
  c.types = {{3600, false, "CET"}};
  c.footer = "CET-1CEST,M3.5.0,M10.5.0/3";
  TimeZone zone = FromBytes(c);
  CheckSwitch(zone, kBerlinSummer2026, 3600, 7200, "CET", "CEST");
  CheckSwitch(zone, kBerlinWinter2026, 7200, 3600, "CEST", "CET");
  c.footer = "EST5EDT,M3.2.0,M11.1.0";
  TimeZone new_york = FromBytes(c);
  CheckSwitch(new_york, kNewYorkSummer2026, -5 * 3600, -4 * 3600, "EST", "EDT");
  CheckSwitch(new_york, kNewYorkWinter2026, -4 * 3600, -5 * 3600, "EDT", "EST");
}

TEST_CASE("a version 2 file uses its 64-bit times and the footer only after the last transition") {
  TzifContent c;
  c.types = {{0, false, "LMT"}, {-10800, false, "-03"}};
  c.transitions = {-5000000000, 3000000000};  // before 1901 and after 2038: beyond 32 bits
  c.type_indices = {0, 1};
  c.footer = "<-03>3";
  TimeZone zone = FromBytes(c);
  CHECK(zone.OffsetAt(0) == 0);
  CHECK(zone.OffsetAt(3000000000) == -10800);
  CHECK(zone.ToCivil(3000000000).abbreviation == "-03");
  CHECK(zone.OffsetAt(5000000000) == -10800);
}

TEST_CASE("footer rules read offsets with minutes, Jn and n days and times beyond 24 hours") {
  Result<PosixTzRule> kolkata = ParsePosixTz("<+0530>-5:30");
  REQUIRE(kolkata.ok());
  CHECK(kolkata->std_offset == 19800);
  CHECK(kolkata->std_abbreviation == "+0530");
  CHECK_FALSE(kolkata->has_dst);
  // Israel: the Friday before the last Sunday of March at 02:00 ("M3.4.4/26": Thursday 26:00).
  Result<PosixTzRule> israel = ParsePosixTz("IST-2IDT,M3.4.4/26,M10.5.0");
  REQUIRE(israel.ok());
  CHECK(israel->start.seconds == 26 * 3600);
  CHECK(israel->At(1774569599).offset == 7200);   // 2026-03-27 01:59:59 local
  CHECK(israel->At(1774569600).offset == 10800);  // 02:00 IST = 00:00 UTC
  Result<PosixTzRule> julian = ParsePosixTz("XXX0YYY-2,J60/0,300/-1");
  REQUIRE(julian.ok());
  CHECK(julian->dst_offset == 7200);
  CHECK(julian->At(1772323200).offset == 7200);      // 1 March 2026 00:00 UTC (J60 = 1 March)
  CHECK(julian->At(1772323200 - 1).offset == 0);
  CHECK(julian->end.seconds == -3600);
}

TEST_CASE("footer rules that are not POSIX TZ strings are refused with the reason") {
  for (const char* bad : {"", "CE", "CET", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0",
                          "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,M3.5.0/200,M10.5.0",
                          "CET-1 ", "<+05>-5:60", "CET-25", "CET-1CEST,J0,J365"}) {
    INFO(bad);
    Result<PosixTzRule> rule = ParsePosixTz(bad);
    CHECK_FALSE(rule.ok());
    CHECK(rule.status().message().find("TZ rule \"" + std::string(bad) + "\": expected") == 0);
  }
}

TEST_CASE("damaged and leap-second files are refused") {
  TzifContent c;
  c.types = {{3600, false, "CET"}};
  c.footer = "CET-1";
  std::string good = BuildTzif(c);
  CHECK(TimeZone::FromTzif("T", good).ok());
  CHECK(TimeZone::FromTzif("T", "not a zone").status().message() == "time zone T: not a TZif file (RFC 8536)");
  for (size_t cut : {size_t{10}, size_t{50}, good.size() - 3, good.size() - 1}) {
    INFO(cut);
    CHECK_FALSE(TimeZone::FromTzif("T", good.substr(0, cut)).ok());
  }
  TzifContent leaps = c;
  leaps.leap_count = 2;
  CHECK(TimeZone::FromTzif("right/T", BuildTzif(leaps)).status().message().find("leap seconds") !=
        std::string::npos);
  TzifContent bad_index = c;
  bad_index.transitions = {100};
  bad_index.type_indices = {3};
  CHECK(TimeZone::FromTzif("T", BuildTzif(bad_index)).status().message() ==
        "time zone T: damaged TZif file: type index out of range");
  TzifContent unsorted = c;
  unsorted.transitions = {200, 100};
  unsorted.type_indices = {0, 0};
  CHECK_FALSE(TimeZone::FromTzif("T", BuildTzif(unsorted)).ok());
  TzifContent bad_footer = c;
  bad_footer.footer = "CET-1CEST";
  CHECK(TimeZone::FromTzif("T", BuildTzif(bad_footer)).status().message().find("time zone T: TZ rule") == 0);
}

TEST_CASE("zones load from an injected directory, and names cannot leave it") {
  TempDir dir;
  TzifContent c;
  c.types = {{-3 * 3600, false, "-03"}};
  c.footer = "<-03>3";
  REQUIRE(std::filesystem::create_directories(dir.File("Test")));
  std::ofstream(dir.File("Test/Minus_Three"), std::ios::binary) << BuildTzif(c);
  std::ofstream(dir.File("Test/garbage"), std::ios::binary) << "garbage";
  Result<TimeZone> zone = LoadTimeZone("Test/Minus_Three", dir.path());
  REQUIRE(zone.ok());
  CHECK(zone->name() == "Test/Minus_Three");
  CHECK(zone->OffsetAt(0) == -10800);
  CHECK(LoadTimeZone("UTC", dir.path()).ok());  // built in
  Result<TimeZone> missing = LoadTimeZone("Europe/Berlin", dir.path());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() ==
        "unknown time zone \"Europe/Berlin\": no file " + dir.path() + "/Europe/Berlin");
  CHECK(LoadTimeZone("Test", dir.path()).status().code() == StatusCode::kNotFound);  // a directory
  CHECK(LoadTimeZone("Test/garbage", dir.path()).status().code() == StatusCode::kInvalid);
  for (const char* name : {"", "/etc/localtime", "../Test/Minus_Three", "Test/../Test/Minus_Three", "Test//x",
                           "Test/", "./Test/Minus_Three", "Europe/Berlin\n", "Europe Berlin"}) {
    INFO(name);
    Result<TimeZone> refused = LoadTimeZone(name, dir.path());
    CHECK(refused.status().code() == StatusCode::kInvalid);
    CHECK(refused.status().message().find("expected an IANA name such as Europe/Berlin") != std::string::npos);
  }
}
