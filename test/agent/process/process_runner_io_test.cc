// ProcessRunner with well-behaved hooks: what goes in, what comes out, how the end is reported.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "agent/process/process_runner.h"
#include "hook_test_util.h"
#include "test/fakes/captured_log.h"

using nodehook::ActionRequest;
using nodehook::ActionResult;
using nodehook::CancelToken;
using nodehook::ProcessRunner;
using nodehook::testing::ShellHook;
using nodehook::TempDir;

namespace {

ActionResult RunHook(const ActionRequest& request) {
  ProcessRunner runner;
  CancelToken cancel;
  return runner.Run(request, cancel);
}

// The message of a run that must fail to start; a run that started yields a marker instead.
std::string StartFailure(std::vector<std::string> argv) {
  ActionRequest request;
  request.argv = std::move(argv);
  auto result = RunHook(request);
  return result.kind == ActionResult::Kind::kFailedToStart ? result.message : "started: " + result.message;
}

}  // namespace

TEST_CASE("the hook's exit code is reported") {
  auto failed = RunHook(ShellHook("exit 3"));
  REQUIRE(failed.kind == ActionResult::Kind::kExited);
  REQUIRE(failed.exit_code == 3);
  REQUIRE(failed.message == "exited 3");

  auto succeeded = RunHook(ShellHook("exit 0"));
  REQUIRE(succeeded.kind == ActionResult::Kind::kExited);
  REQUIRE(succeeded.exit_code == 0);
  REQUIRE(succeeded.message == "exited 0");
}

TEST_CASE("the request's stdin reaches the hook, and stdout and stderr come back together") {
  auto request = ShellHook("cat; echo oops >&2");
  request.stdin_data = "{\"kind\":\"Thing\"}\n";
  auto result = RunHook(request);
  REQUIRE(result.message == "exited 0");
  REQUIRE(result.output == "{\"kind\":\"Thing\"}\noops\n");
}

TEST_CASE("stdin larger than a pipe buffer reaches a hook that writes while it reads") {
  auto request = ShellHook("cat");
  request.stdin_data = std::string(1 << 20, 'x');
  auto result = RunHook(request);
  REQUIRE(result.message == "exited 0");
  REQUIRE(result.output == std::string(16 * 1024, 'x'));
}

TEST_CASE("the hook gets the agent's environment with the request's env added and overriding") {
  setenv("NODEHOOK_TEST_KEPT", "from-agent", 1);
  setenv("NODEHOOK_TEST_REPLACED", "from-agent", 1);
  auto request = ShellHook("printf '%s|%s|%s' \"$NODEHOOK_TEST_KEPT\" \"$NODEHOOK_TEST_REPLACED\" \"$NODEHOOK_TEST_NEW\"");
  request.env = {{"NODEHOOK_TEST_REPLACED", "from-request"}, {"NODEHOOK_TEST_NEW", "new value"}};
  auto result = RunHook(request);
  REQUIRE(result.output == "from-agent|from-request|new value");
}

TEST_CASE("only the tail of a long output is kept") {
  auto request = ShellHook("head -c 100000 /dev/zero | tr '\\0' x; echo END");
  auto result = RunHook(request);
  REQUIRE(result.message == "exited 0");
  REQUIRE(result.output.size() == 16 * 1024);
  REQUIRE(result.output.substr(result.output.size() - 4) == "END\n");
}

TEST_CASE("the output limit is configurable") {
  nodehook::ProcessRunnerOptions options;
  options.output_limit = 3;
  ProcessRunner runner(options);
  CancelToken cancel;
  REQUIRE(runner.Run(ShellHook("echo hello"), cancel).output == "lo\n");
}

TEST_CASE("a hook that exits without reading its stdin is fine, and the next hook gets SIGPIPE as usual") {
  auto request = ShellHook("exit 0");
  request.stdin_data = std::string(1 << 20, 'x');
  ProcessRunner runner;
  CancelToken cancel;
  REQUIRE(runner.Run(request, cancel).message == "exited 0");  // EPIPE, not a dead agent

  // The SIGPIPE that write raised stays blocked on this thread, so it never acts here; the next
  // hook from the same thread starts with it neither pending, blocked nor ignored.
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  REQUIRE(sigismember(&mask, SIGPIPE) == 1);
  ActionResult next = runner.Run(ShellHook("grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn):' /proc/self/status"), cancel);
  REQUIRE(next.message == "exited 0");
  const uint64_t sigpipe_bit = uint64_t{1} << (SIGPIPE - 1);
  std::istringstream lines(next.output);
  std::string name, hex;
  int seen = 0;
  while (lines >> name >> hex) {
    INFO(name << " " << hex);
    REQUIRE((std::stoull(hex, nullptr, 16) & sigpipe_bit) == 0);
    ++seen;
  }
  REQUIRE(seen == 4);
}

TEST_CASE("a program that does not exist fails to start and says why") {
  REQUIRE(StartFailure({"/nonexistent/hook"}) == "exec /nonexistent/hook: No such file or directory");
}

TEST_CASE("a name that is nowhere in PATH fails to start") {
  REQUIRE(StartFailure({"nodehook-no-such-program"}) == "exec nodehook-no-such-program: No such file or directory");
}

TEST_CASE("a file without execute permission fails to start with permission denied") {
  TempDir dir;
  { std::ofstream(dir.File("hook")) << "#!/bin/sh\nexit 0\n"; }
  chmod(dir.File("hook").c_str(), 0644);
  REQUIRE(StartFailure({dir.File("hook")}) == "exec " + dir.File("hook") + ": Permission denied");
}

TEST_CASE("an empty argv fails to start") {
  auto result = RunHook(ActionRequest{});
  REQUIRE(result.kind == ActionResult::Kind::kFailedToStart);
}

TEST_CASE("a bare program name is found through PATH") {
  ActionRequest request;
  request.argv = {"sh", "-c", "exit 4"};
  REQUIRE(RunHook(request).message == "exited 4");
}

TEST_CASE("a hook that kills itself is reported as killed by that signal") {
  auto result = RunHook(ShellHook("kill -9 $$"));
  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == 9);
  REQUIRE(result.message == "killed by signal 9");
}

TEST_CASE("a hook does not inherit signals the agent ignores") {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR1, &ignore, &old);
  auto result = RunHook(ShellHook("kill -USR1 $$; exit 0"));
  sigaction(SIGUSR1, &old, nullptr);
  REQUIRE(result.kind == ActionResult::Kind::kSignaled);
  REQUIRE(result.signal == SIGUSR1);
}

TEST_CASE("a run whose token is already cancelled does not start the hook") {
  TempDir dir;
  ProcessRunner runner;
  CancelToken cancel;
  cancel.Cancel();
  auto result = runner.Run(ShellHook("touch \"$1\"", {dir.File("started")}), cancel);
  REQUIRE(result.kind == ActionResult::Kind::kCancelled);
  REQUIRE_FALSE(std::filesystem::exists(dir.File("started")));
}

TEST_CASE("an enormous timeout means no timeout rather than an overflowed deadline") {
  auto request = ShellHook("exit 0");
  request.timeout = std::chrono::milliseconds::max();
  REQUIRE(RunHook(request).message == "exited 0");
}

TEST_CASE("at debug level every hook spawn is logged with its argv and the object it is for") {
  nodehook::CapturedLog log;
  nodehook::ScopedLogLevel debug(nodehook::LogLevel::kDebug);
  ActionRequest request = ShellHook("exit 0", {"two words", "it's"});
  request.env = {{"NODEHOOK_NAMESPACE", "shop"}, {"NODEHOOK_NAME", "w1"}, {"NODEHOOK_UID", "u-1"},
                 {"NODEHOOK_REASON", "create"}};
  REQUIRE(RunHook(request).exit_code == 0);
  REQUIRE(log.Count(R"(event="hook spawned" object=shop/w1 uid=u-1 handler=create)") == 1);
  CHECK(log.Count(R"(argv="/bin/sh -c 'exit 0' sh 'two words' 'it'\\''s'")") == 1);
}
