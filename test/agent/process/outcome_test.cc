#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "agent/process/outcome.h"
#include "agent/process/output_tail.h"

using nodehook::ActionResult;
using nodehook::DescribeOutcome;
using nodehook::FormatDuration;
using nodehook::OutputTail;
using nodehook::StopReason;
using namespace std::chrono_literals;

TEST_CASE("a hook that exits is described by its exit code") {
  auto result = DescribeOutcome(StopReason::kNone, W_EXITCODE(3, 0), 5s);
  REQUIRE(result.kind == ActionResult::Kind::kExited);
  REQUIRE(result.exit_code == 3);
  REQUIRE(result.message == "exited 3");
  REQUIRE(DescribeOutcome(StopReason::kNone, W_EXITCODE(0, 0), 5s).message == "exited 0");
}

TEST_CASE("a hook killed by a signal is described by the signal number") {
  auto result = DescribeOutcome(StopReason::kNone, W_EXITCODE(0, 9), 5s);
  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == 9);
  REQUIRE(result.message == "killed by signal 9");
}

TEST_CASE("a timeout is reported as such whatever the hook's own exit looked like") {
  auto result = DescribeOutcome(StopReason::kTimeout, W_EXITCODE(0, 15), 5s);
  REQUIRE(result.kind == ActionResult::Kind::kTimedOut);
  REQUIRE(result.message == "timed out after 5s");
  REQUIRE(result.signal == 15);
}

TEST_CASE("a cancelled hook is reported as cancelled") {
  auto result = DescribeOutcome(StopReason::kCancel, W_EXITCODE(0, 9), 5s);
  REQUIRE(result.kind == ActionResult::Kind::kCancelled);
  REQUIRE(result.message == "cancelled");
}

TEST_CASE("a lost exit status still counts as an abnormal end") {
  auto result = DescribeOutcome(StopReason::kNone, std::nullopt, 5s);
  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == 0);
}

TEST_CASE("durations read as whole seconds when they are whole, else as milliseconds") {
  REQUIRE(FormatDuration(30s) == "30s");
  REQUIRE(FormatDuration(250ms) == "250ms");
  REQUIRE(FormatDuration(1500ms) == "1500ms");
}

TEST_CASE("the output tail keeps only the last bytes, however they arrive") {
  OutputTail tail(4);
  tail.Append("ab", 2);
  REQUIRE(tail.text() == "ab");
  tail.Append("cde", 3);
  REQUIRE(tail.text() == "bcde");
  tail.Append("0123456789", 10);
  REQUIRE(tail.text() == "6789");
}
