#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "agent/process/child_ledger.h"

using namespace nodehook;

namespace {

// A child that exits at once with `code`; returns once it is a zombie (not reaped).
pid_t ExitedChild(int code) {
  const pid_t pid = fork();
  if (pid == 0) _exit(code);
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
  return pid;
}

bool Reaped(const std::vector<ReapedChild>& reaped, pid_t pid) {
  return std::any_of(reaped.begin(), reaped.end(), [&](const ReapedChild& c) { return c.pid == pid; });
}

}  // namespace

TEST_CASE("the ledger reaps an untracked exited child and leaves a tracked one to its owner") {
  ChildLedger& ledger = ChildLedger::Instance();
  const pid_t tracked = ExitedChild(7);
  ledger.Track(tracked);
  const pid_t orphan = ExitedChild(3);

  const auto reaped = ledger.ReapUntracked();
  REQUIRE(Reaped(reaped, orphan));
  REQUIRE_FALSE(Reaped(reaped, tracked));
  const auto entry = std::find_if(reaped.begin(), reaped.end(), [&](const ReapedChild& c) { return c.pid == orphan; });
  REQUIRE(entry->code == CLD_EXITED);
  REQUIRE(entry->status == 3);

  int status = 0;
  REQUIRE(waitpid(tracked, &status, 0) == tracked);  // the owner still gets its exit status
  REQUIRE(WEXITSTATUS(status) == 7);
  ledger.Untrack(tracked);
  REQUIRE_FALSE(ledger.IsTracked(tracked));
}

TEST_CASE("a tracked zombie that waitid reports first does not hide the others behind it") {
  ChildLedger& ledger = ChildLedger::Instance();
  const pid_t tracked = ExitedChild(0);  // the oldest zombie: what waitid(P_ALL) reports first
  ledger.Track(tracked);
  const pid_t first = ExitedChild(1);
  const pid_t second = ExitedChild(2);

  const auto reaped = ledger.ReapUntracked();
  REQUIRE(Reaped(reaped, first));
  REQUIRE(Reaped(reaped, second));
  REQUIRE(waitpid(tracked, nullptr, 0) == tracked);
  ledger.Untrack(tracked);
}

TEST_CASE("a pid tracked twice (reused before its first owner untracked it) stays tracked until both let go") {
  ChildLedger& ledger = ChildLedger::Instance();
  ledger.Track(999999);
  ledger.Track(999999);
  ledger.Untrack(999999);
  REQUIRE(ledger.IsTracked(999999));
  ledger.Untrack(999999);
  REQUIRE_FALSE(ledger.IsTracked(999999));
}
