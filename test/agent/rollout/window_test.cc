// Maintenance windows judged at an instant the test passes in, in the windows' own zones.
#include <catch2/catch.hpp>

#include "agent/rollout/rules/window.h"

using namespace nodehook;

namespace {

std::vector<CompiledWindow> Compile(const std::vector<RolloutWindow>& windows) {
  Result<std::vector<CompiledWindow>> compiled = CompileWindows(windows);
  INFO(compiled.status().message());
  REQUIRE(compiled.ok());
  return compiled.value();
}

RolloutWindow Window(const std::string& cron, int64_t seconds, const std::string& zone) {
  return RolloutWindow{cron, std::chrono::seconds(seconds), zone};
}

constexpr int64_t kDay = 24 * 3600;
constexpr int64_t kDec1At22Utc = 1796162400;  // Tuesday 2026-12-01 22:00 UTC = 17:00 in New York

void CheckOpen(const WindowState& s, int64_t closes_at) {
  CHECK(s.open);
  CHECK(s.closes_at == closes_at);
  CHECK(s.next_open_at == 0);
}

void CheckClosed(const WindowState& s, int64_t next_open_at) {
  CHECK_FALSE(s.open);
  CHECK(s.closes_at == 0);
  CHECK(s.next_open_at == next_open_at);
}

}  // namespace

TEST_CASE("no windows means always open") {
  CheckOpen(JudgeWindows({}, kDec1At22Utc), 0);
}

TEST_CASE("the rules' view in milliseconds: the next opening, and windows that did not compile stay closed") {
  Result<std::vector<CompiledWindow>> nightly = CompileWindows({Window("0 1 * * *", 3600, "UTC")});
  WindowNow now = WindowsNow(nightly, kDec1At22Utc * 1000 + 5);
  CHECK_FALSE(now.open);
  CHECK(now.next_open_ms == (kDec1At22Utc + 3 * 3600) * 1000);
  CHECK(WindowsNow(nightly, (kDec1At22Utc + 3 * 3600) * 1000).open);
  WindowNow broken = WindowsNow(CompileWindows({Window("0 1 * * *", 3600, "No/Such_Zone")}), kDec1At22Utc * 1000);
  CHECK_FALSE(broken.open);
  CHECK(broken.next_open_ms == 0);
}

TEST_CASE("a window that opens in 20 s for 30 s, declared in New York, opens by New York's clock") {
  // The start is 17:00 in New York. Seconds, not the config's 60 s minimum: JudgeWindows takes any.
  std::vector<CompiledWindow> windows = Compile({Window("0 17 * * *", 30, "America/New_York")});
  const int64_t start = kDec1At22Utc;
  CheckClosed(JudgeWindows(windows, start - 20), start);
  CheckOpen(JudgeWindows(windows, start), start + 30);
  CheckOpen(JudgeWindows(windows, start + 29), start + 30);
  CheckClosed(JudgeWindows(windows, start + 30), start + kDay);
  // The same expression in UTC opens five hours earlier.
  CheckClosed(JudgeWindows(Compile({Window("0 17 * * *", 30, "UTC")}), start - 20), start - 5 * 3600 + kDay);
}

TEST_CASE("a weeknight window spanning midnight stays open into Saturday morning") {
  // 22:00 to 02:00 in Berlin, starting Monday to Friday.
  std::vector<CompiledWindow> windows = Compile({Window("0 22 * * 1-5", 4 * 3600, "Europe/Berlin")});
  const int64_t friday_22 = kDec1At22Utc + 3 * kDay - 3600;  // Friday 4 December 22:00 CET
  CheckOpen(JudgeWindows(windows, friday_22 + 3 * 3600), friday_22 + 4 * 3600);  // Saturday 01:00
  CheckClosed(JudgeWindows(windows, friday_22 + 4 * 3600), friday_22 + 3 * kDay);  // ...then Monday 22:00
  CheckClosed(JudgeWindows(windows, friday_22 + kDay + 3600), friday_22 + 3 * kDay);  // Saturday 23:00
  CheckOpen(JudgeWindows(windows, friday_22 - 3 * kDay + 60), friday_22 - 3 * kDay + 4 * 3600);  // Tuesday
}

TEST_CASE("a window across the spring DST change lasts its duration in real time") {
  // 01:00 CET on 29 March 2026 (00:00 UTC), three hours: until 03:00 UTC, which is 05:00 CEST.
  std::vector<CompiledWindow> windows = Compile({Window("0 1 * * *", 3 * 3600, "Europe/Berlin")});
  const int64_t start = 1774742400;
  CheckOpen(JudgeWindows(windows, start + 2 * 3600 + 1800), start + 3 * 3600);
  // The next start is 01:00 CEST on 30 March: 23:00 UTC on the 29th, 23 hours after this one.
  CheckClosed(JudgeWindows(windows, start + 3 * 3600), start + 23 * 3600);
}

TEST_CASE("a window that starts in the skipped hour opens when the clock jumps") {
  std::vector<CompiledWindow> windows = Compile({Window("30 2 * * *", 3600, "Europe/Berlin")});
  const int64_t jump = 1774746000;  // 29 March 2026 01:00 UTC
  CheckClosed(JudgeWindows(windows, jump - 60), jump);
  CheckOpen(JudgeWindows(windows, jump), jump + 3600);
}

TEST_CASE("a window that starts in the repeated hour opens once, on the first pass") {
  std::vector<CompiledWindow> windows = Compile({Window("30 2 * * *", 60, "Europe/Berlin")});
  const int64_t back = 1792890000;  // 25 October 2026 01:00 UTC
  CheckOpen(JudgeWindows(windows, back - 1800), back - 1740);                   // 02:30 CEST
  CheckClosed(JudgeWindows(windows, back + 1800), back + kDay + 1800);          // 02:30 CET: not again
}

TEST_CASE("the next opening is the earliest of several windows, each in its own zone") {
  std::vector<CompiledWindow> windows = Compile({Window("0 3 * * SAT", 3600, "Asia/Kolkata"),  // 21:30 UTC Fri
                                                 Window("0 0 * * *", 3600, "Europe/Berlin"),   // 23:00 UTC
                                                 Window("0 0 30 2 *", 3600, "UTC")});          // never
  CheckClosed(JudgeWindows(windows, kDec1At22Utc), kDec1At22Utc + 3600);
  const int64_t friday_2130 = kDec1At22Utc + 3 * kDay - 1800;
  CheckClosed(JudgeWindows(windows, friday_2130 - 60), friday_2130);
  CheckOpen(JudgeWindows(windows, friday_2130), friday_2130 + 3600);
}

TEST_CASE("a window that never starts within a year is closed with no next opening") {
  CheckClosed(JudgeWindows(Compile({Window("0 0 30 2 *", 3600, "UTC")}), kDec1At22Utc), 0);
}

TEST_CASE("overlapping windows close when the last of them does") {
  std::vector<CompiledWindow> windows = Compile({Window("0 22 * * *", 2 * 3600, "UTC"),
                                                 Window("0 23 * * *", 2 * 3600, "UTC"),
                                                 Window("0 1 * * *", 3600, "UTC")});  // starts as the second ends
  CheckOpen(JudgeWindows(windows, kDec1At22Utc + 60), kDec1At22Utc + 4 * 3600);
}

TEST_CASE("a window set that is always open reports a close at least the chain limit ahead") {
  WindowState s = JudgeWindows(Compile({Window("* * * * *", 60, "Europe/Berlin")}), kDec1At22Utc + 30);
  CHECK(s.open);
  CHECK(s.closes_at >= kDec1At22Utc + 30 + kWindowChainSeconds);
  CHECK(s.closes_at <= kDec1At22Utc + 30 + kWindowChainSeconds + 60);
}

TEST_CASE("compiling windows names the window whose cron or zone is wrong") {
  Result<std::vector<CompiledWindow>> bad_cron =
      CompileWindows({Window("0 22 * * *", 60, "UTC"), Window("0 25 * * *", 60, "UTC")});
  REQUIRE_FALSE(bad_cron.ok());
  CHECK(bad_cron.status().message().find("windows[1].cron: hour field \"25\": expected") == 0);
  Result<std::vector<CompiledWindow>> bad_zone = CompileWindows({Window("0 22 * * *", 60, "Mars/Olympus")});
  REQUIRE_FALSE(bad_zone.ok());
  CHECK(bad_zone.status().code() == StatusCode::kNotFound);
  CHECK(bad_zone.status().message() ==
        "windows[0].time_zone: unknown time zone \"Mars/Olympus\": no file /usr/share/zoneinfo/Mars/Olympus");
  CHECK_FALSE(CompileWindows({Window("0 22 * * *", 0, "UTC")}).ok());
}

TEST_CASE("windows in one zone share the loaded zone") {
  std::vector<CompiledWindow> windows = Compile({Window("0 22 * * *", 60, "Europe/Berlin"),
                                                 Window("0 23 * * *", 60, "Europe/Berlin")});
  CHECK(windows[0].zone == windows[1].zone);
}
