// Its own test binary: the reaper makes the whole process a child subreaper.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "agent/kube/credentials/plugin_process.h"
#include "agent/process/orphan_reaper.h"
#include "agent/process/process_runner.h"
#include "test/agent/process/hook_test_util.h"

using namespace nodehook;
using namespace nodehook::testing;
using namespace std::chrono_literals;

namespace {

// Our children that exited and nobody reaped.
std::vector<pid_t> ZombieChildren() {
  std::vector<pid_t> zombies;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream list(task.path() / "children");
    long pid = 0;
    while (list >> pid) {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const size_t paren = text.rfind(')');
      if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') {
        zombies.push_back(static_cast<pid_t>(pid));
      }
    }
  }
  return zombies;
}

// Polls until `pid` has no /proc entry left: reaped, not merely dead. The reaper acts on its own
// thread, an outside event for this test, so polling is the only way to see it.
bool ReapedSoon(pid_t pid) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (std::filesystem::exists("/proc/" + std::to_string(pid))) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// The signal mask of this process's thread named `name`, from /proc (SigBlk, hexadecimal).
unsigned long long BlockedSignalsOf(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    std::string line, comm;
    while (std::getline(status, line)) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      if (line.compare(0, tab, "Name:") == 0) comm = line.substr(tab + 1);
      if (line.compare(0, tab, "SigBlk:") == 0 && comm == name) return std::stoull(line.substr(tab + 1), nullptr, 16);
    }
  }
  return 0;
}

bool Blocks(unsigned long long mask, int sig) { return (mask >> (sig - 1)) & 1; }

}  // namespace

TEST_CASE("the reaper's thread blocks SIGTERM and SIGINT, so they reach the agent's signal watcher") {
  OrphanReaper reaper(std::chrono::seconds(1));
  // The thread names itself once it runs: an outside event for this test.
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  unsigned long long mask = 0;
  while ((mask = BlockedSignalsOf("nh-reaper")) == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(5ms);
  }
  REQUIRE(Blocks(mask, SIGTERM));
  REQUIRE(Blocks(mask, SIGINT));
}

TEST_CASE("a daemon a hook leaves behind is reaped when it exits, and every hook keeps its own exit status") {
  // A short period: the test polls for each daemon's reaping (ReapedSoon), so the period only
  // bounds how long that takes.
  OrphanReaper reaper(std::chrono::milliseconds(20));
  TempDir dir;
  ProcessRunner runner;
  CancelToken cancel;
  constexpr int kWorkers = 4;
  constexpr int kRunsEach = 10;
  std::atomic<int> wrong_status{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int i = 0; i < kRunsEach; ++i) {
        const int code = (w * kRunsEach + i) % 50;
        const std::string pid_file = dir.File("daemon-" + std::to_string(w) + "-" + std::to_string(i));
        // The hook's child starts a daemon in its own session, then both exit: the daemon is an
        // orphan. The hook waits for the daemon's pid file: only then has it left the hook's
        // process group, which the runner kills once the hook has exited.
        auto hook = ShellHook(
            "sh -c 'setsid sh -c \"echo \\$\\$ > $1; sleep 0.05\" </dev/null >/dev/null 2>&1 &' sh \"$1\"; "
            "while [ ! -s \"$1\" ]; do sleep 0.01; done; exit $2",
            {pid_file, std::to_string(code)});
        ActionResult result = runner.Run(hook, cancel);
        if (result.kind != ActionResult::Kind::kExited || result.exit_code != code) wrong_status.fetch_add(1);
      }
    });
  }
  for (auto& t : workers) t.join();
  REQUIRE(wrong_status.load() == 0);

  for (int w = 0; w < kWorkers; ++w) {
    for (int i = 0; i < kRunsEach; ++i) {
      const pid_t daemon = WaitForPidFile(dir.File("daemon-" + std::to_string(w) + "-" + std::to_string(i)));
      REQUIRE(daemon > 0);
      REQUIRE(ReapedSoon(daemon));
    }
  }
  REQUIRE(reaper.reaped() >= kWorkers * kRunsEach);
  REQUIRE(ZombieChildren().empty());
}

TEST_CASE("a credential plugin keeps its own exit status while the reaper looks as often as it can") {
  // A period of a millisecond: the reaper looks between the plugin's exit and RunPlugin's
  // waitpid in many of these runs, unless the plugin's pid is tracked in the ledger.
  OrphanReaper reaper(std::chrono::milliseconds(1));
  int wrong = 0;
  for (int i = 0; i < 100; ++i) {
    Result<PluginOutput> out = RunPlugin(PluginCommand{{"/bin/sh", "-c", "echo '{}'; exit 3"}, {}});
    REQUIRE(out.ok());
    if (out->exit_code != 3) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(reaper.reaped() == 0);  // the plugins were their runner's to reap
}
