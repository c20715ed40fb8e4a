// SpawnChild on its own: how the child starts (clone, not fork) and what it starts with.
// The child is held on its stdin while the test looks at it through /proc, so nothing here
// waits on time.
#include "agent/process/spawn.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

extern char** environ;

using nodehook::ActionRequest;
using nodehook::MakeExecPlan;
using nodehook::SpawnChild;
using nodehook::SpawnedChild;

namespace {

std::atomic<int> forks{0};

// A hook that blocks until its stdin closes, then exits 0.
SpawnedChild SpawnWaitingHook() {
  ActionRequest request;
  request.argv = {"/bin/sh", "-c", "read line; exit 0"};
  auto child = SpawnChild(MakeExecPlan(request, std::make_shared<nodehook::BaseEnvironment>(environ)));
  REQUIRE(child.ok());
  return std::move(*child);
}

int Reap(SpawnedChild& child) {
  child.stdin_fd.Reset();
  int status = 0;
  REQUIRE(waitpid(child.pid, &status, 0) == child.pid);
  return status;
}

std::string StatusField(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

}  // namespace

TEST_CASE("a hook is started without forking the agent: no fork handler runs") {
  static bool registered = pthread_atfork([] { forks.fetch_add(1); }, nullptr, nullptr) == 0;
  REQUIRE(registered);
  int before = forks.load();
  SpawnedChild child = SpawnWaitingHook();
  Reap(child);
  REQUIRE(forks.load() == before);
}

TEST_CASE("a spawned hook leads its own process group, holds only stdin, stdout and stderr, and blocks no signal") {
  // The spawning thread's own mask must not leak into the hook.
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  REQUIRE(pthread_sigmask(SIG_BLOCK, &usr1, &old) == 0);
  SpawnedChild child = SpawnWaitingHook();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);

  // Exec'd already (SpawnChild returns after the exec), and still waiting on its stdin.
  REQUIRE(getpgid(child.pid) == child.pid);
  std::set<std::string> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(child.pid) + "/fd")) {
    fds.insert(entry.path().filename().string());
  }
  REQUIRE(fds == std::set<std::string>{"0", "1", "2"});
  REQUIRE(StatusField(child.pid, "SigBlk").find_first_not_of("0\t ") == std::string::npos);
  REQUIRE(StatusField(child.pid, "SigIgn").find_first_not_of("0\t ") == std::string::npos);
  int status = Reap(child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

TEST_CASE("a program that cannot be executed is reported by the spawn, and no child is left behind") {
  ActionRequest request;
  request.argv = {"/nonexistent/hook"};
  auto child = SpawnChild(MakeExecPlan(request, std::make_shared<nodehook::BaseEnvironment>(environ)));
  REQUIRE_FALSE(child.ok());
  REQUIRE(child.status().message() == "exec /nonexistent/hook: No such file or directory");
  errno = 0;
  REQUIRE(waitpid(-1, nullptr, WNOHANG) == -1);
  REQUIRE(errno == ECHILD);
}
