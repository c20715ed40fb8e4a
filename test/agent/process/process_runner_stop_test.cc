// ProcessRunner stopping hooks: timeouts, the SIGTERM grace period, cancellation, and
// background children that try to outlive the hook. Real processes, so real (short) time;
// durations are only checked against generous bounds.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "agent/process/process_runner.h"
#include "hook_test_util.h"

using nodehook::ActionResult;
using nodehook::CancelToken;
using nodehook::ProcessRunner;
using nodehook::ProcessRunnerOptions;
using nodehook::testing::ProcessGoneSoon;
using nodehook::testing::ReadPid;
using nodehook::testing::ShellHook;
using nodehook::TempDir;
using nodehook::testing::WaitForPidFile;
using namespace std::chrono_literals;

namespace {

ProcessRunnerOptions ShortOptions() {
  ProcessRunnerOptions options;
  options.grace_period = 300ms;
  options.drain_window = 200ms;
  options.poll_interval = 20ms;
  return options;
}

// Starts `sleep 30` in the background (its pid in $1), then sleeps in the foreground.
const char* kHookWithBackgroundChild = "sleep 30 & echo $! > \"$1\"; sleep 30";

}  // namespace

TEST_CASE("a hook that outlives its timeout is killed together with its background children") {
  TempDir dir;
  auto request = ShellHook(kHookWithBackgroundChild, {dir.File("child.pid")});
  request.timeout = 500ms;
  CancelToken cancel;
  auto result = ProcessRunner(ShortOptions()).Run(request, cancel);

  REQUIRE(result.kind == ActionResult::Kind::kTimedOut);
  REQUIRE(result.message == "timed out after 500ms");
  REQUIRE(result.signal == SIGTERM);
  REQUIRE(result.duration >= 500ms);
  REQUIRE(result.duration < 10s);
  const pid_t child = ReadPid(dir.File("child.pid"));
  REQUIRE(child > 0);
  REQUIRE(ProcessGoneSoon(child));
}

TEST_CASE("a hook that ignores SIGTERM is killed with SIGKILL after the grace period") {
  auto request = ShellHook("trap '' TERM; sleep 30");
  request.timeout = 500ms;
  CancelToken cancel;
  auto result = ProcessRunner(ShortOptions()).Run(request, cancel);

  REQUIRE(result.kind == ActionResult::Kind::kTimedOut);
  REQUIRE(result.signal == SIGKILL);
  REQUIRE(result.duration >= 500ms + 300ms);
  REQUIRE(result.duration < 10s);
}

TEST_CASE("a hook's exit is not held up by a background child that keeps its output open") {
  TempDir dir;
  auto request = ShellHook("sleep 30 & echo $! > \"$1\"; echo done", {dir.File("child.pid")});
  request.timeout = 20s;
  CancelToken cancel;
  auto result = ProcessRunner(ShortOptions()).Run(request, cancel);

  REQUIRE(result.kind == ActionResult::Kind::kExited);
  REQUIRE(result.exit_code == 0);
  REQUIRE(result.output == "done\n");
  REQUIRE(result.duration < 10s);
  REQUIRE(ProcessGoneSoon(ReadPid(dir.File("child.pid"))));
}

TEST_CASE("cancelling a run kills the hook and its children") {
  TempDir dir;
  auto request = ShellHook(kHookWithBackgroundChild, {dir.File("child.pid")});
  request.timeout = 60s;
  CancelToken cancel;
  ActionResult result;
  std::thread worker([&] { result = ProcessRunner(ShortOptions()).Run(request, cancel); });
  const pid_t child = WaitForPidFile(dir.File("child.pid"));
  cancel.Cancel();
  worker.join();

  REQUIRE(child > 0);
  REQUIRE(result.kind == ActionResult::Kind::kCancelled);
  REQUIRE(result.message == "cancelled");
  REQUIRE(result.duration < 10s);
  REQUIRE(ProcessGoneSoon(child));
}

TEST_CASE("several hooks run at once, each with its own input, output and exit code") {
  constexpr int kWorkers = 8;
  std::vector<ActionResult> results(kWorkers);
  std::vector<std::thread> workers;
  ProcessRunner runner(ShortOptions());
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back([&, i] {
      auto request = ShellHook("cat; exit \"$1\"", {std::to_string(i)});
      request.stdin_data = "worker " + std::to_string(i);
      CancelToken cancel;
      results[i] = runner.Run(request, cancel);
    });
  }
  for (auto& w : workers) w.join();
  for (int i = 0; i < kWorkers; ++i) {
    REQUIRE(results[i].kind == ActionResult::Kind::kExited);
    REQUIRE(results[i].exit_code == i);
    REQUIRE(results[i].output == "worker " + std::to_string(i));
  }
}

TEST_CASE("runs of every kind leave no file descriptors and no children behind") {
  auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator());
  };
  const auto fds_before = open_fds();
  ProcessRunner runner(ShortOptions());
  CancelToken cancel;
  auto timing_out = ShellHook("sleep 30");
  timing_out.timeout = 200ms;
  nodehook::ActionRequest missing;
  missing.argv = {"/nonexistent/hook"};

  REQUIRE(runner.Run(ShellHook("echo hi; exit 1"), cancel).kind == ActionResult::Kind::kExited);
  REQUIRE(runner.Run(timing_out, cancel).kind == ActionResult::Kind::kTimedOut);
  REQUIRE(runner.Run(missing, cancel).kind == ActionResult::Kind::kFailedToStart);

  REQUIRE(open_fds() == fds_before);
  REQUIRE(waitpid(-1, nullptr, WNOHANG) == -1);
  REQUIRE(errno == ECHILD);
}

TEST_CASE("a hook dies with an agent that was killed, so a restarted agent never overlaps it") {
  TempDir dir;
  const std::string pid_file = dir.File("hook.pid");
  pid_t agent = fork();
  REQUIRE(agent >= 0);
  if (agent == 0) {
    // The "agent": runs one long hook, and is SIGKILLed by the test meanwhile.
    CancelToken never;
    ProcessRunner().Run(ShellHook("echo $$ > \"$1\"; exec sleep 30", {pid_file}), never);
    _exit(0);
  }
  const pid_t hook = WaitForPidFile(pid_file);
  REQUIRE(hook > 0);
  kill(agent, SIGKILL);
  waitpid(agent, nullptr, 0);
  REQUIRE(ProcessGoneSoon(hook));
}

TEST_CASE("killing all hooks at once (a second stop signal) SIGKILLs each running hook and its children") {
  TempDir dir;
  // Ignores SIGTERM: only SIGKILL, and no grace period, can end it before the 60 s timeout.
  auto request = ShellHook(std::string("trap '' TERM; ") + kHookWithBackgroundChild, {dir.File("child.pid")});
  request.timeout = 60s;
  ProcessRunnerOptions options = ShortOptions();
  options.grace_period = 60s;
  ProcessRunner runner(options);
  CancelToken never;
  ActionResult result;
  std::thread worker([&] { result = runner.Run(request, never); });
  const pid_t child = WaitForPidFile(dir.File("child.pid"));
  runner.KillAllNow();
  worker.join();

  REQUIRE(child > 0);
  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == SIGKILL);
  REQUIRE(result.duration < 30s);
  REQUIRE(ProcessGoneSoon(child));
}

TEST_CASE("a hook started after all hooks were killed at once is killed too") {
  ProcessRunner runner(ShortOptions());
  runner.KillAllNow();
  CancelToken never;
  auto request = ShellHook("trap '' TERM; sleep 30");
  request.timeout = 60s;
  auto result = runner.Run(request, never);

  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == SIGKILL);
  REQUIRE(result.duration < 30s);
}
