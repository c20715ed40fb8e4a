#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "agent/hooks/hook_call.h"
#include "test/fakes/fake_runner.h"

using namespace nodehook;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  FakeRunner runner;
  CancelToken cancel;
  std::string work_dir = "/tmp/nodehook-hook-call-test-" + std::to_string(::getpid());
  HookSpec spec{{"/hooks/create"}, std::chrono::seconds(5)};
  HookInput input;

  Fixture() {
    input.reason = "create";
    input.meta = {"u1", "ns", "w1", "1", false};
    input.new_object = R"({"spec":{}})";
  }
  ScratchPool scratch{work_dir};

  ~Fixture() { fs::remove_all(work_dir); }

  HookOutcome Run() { return RunHook(runner, spec, input, scratch, cancel); }
  // Files (not directories) anywhere under the work dir: what a run could leave to the next.
  size_t FilesInWorkDir() const {
    size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(work_dir)) files += entry.is_directory() ? 0 : 1;
    return files;
  }
  size_t EntriesInWorkDir() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(work_dir), fs::directory_iterator()));
  }
};

std::string ResultFile(const ActionRequest& req) { return FakeRunner::Env(req, "NODEHOOK_RESULT_FILE"); }

}  // namespace

TEST_CASE("the hook gets its input files in a private directory that is empty afterwards and the next run's") {
  Fixture f;
  std::string seen_dir;
  f.runner.OnRun([&](const ActionRequest& req) {
    const std::string new_file = FakeRunner::Env(req, "NODEHOOK_NEW_FILE");
    seen_dir = fs::path(new_file).parent_path();
    std::ifstream in(new_file);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(content == R"({"spec":{}})");
    REQUIRE((fs::status(seen_dir).permissions() & fs::perms::others_all) == fs::perms::none);
  });
  REQUIRE(f.Run().verdict == HookVerdict::kDone);
  REQUIRE_FALSE(seen_dir.empty());
  REQUIRE(fs::is_empty(seen_dir));
  const std::string first_dir = seen_dir;
  REQUIRE(f.Run().verdict == HookVerdict::kDone);  // the second run reads its own files in it
  REQUIRE(seen_dir == first_dir);
}

TEST_CASE("a FIFO as result file fails the run at once instead of hanging the worker") {
  Fixture f;
  bool made_fifo = false;
  f.runner.OnRun([&](const ActionRequest& req) { made_fifo = mkfifo(ResultFile(req).c_str(), 0600) == 0; });
  // Run on another thread, so a regression shows as a clear failure rather than a hung test binary.
  auto outcome = std::async(std::launch::async, [&] { return f.Run(); });
  REQUIRE(outcome.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  HookOutcome out = outcome.get();
  REQUIRE(made_fifo);
  REQUIRE(out.verdict == HookVerdict::kFailed);
  REQUIRE(out.message == "exited 0: result file is not a regular file (a FIFO)");
  REQUIRE(f.FilesInWorkDir() == 0);  // the FIFO went; the emptied directory may wait for the next run
}

TEST_CASE("a result file that is a symbolic link is not followed") {
  Fixture f;
  f.runner.OnRun([](const ActionRequest& req) { fs::create_symlink("/etc/hostname", ResultFile(req)); });
  HookOutcome out = f.Run();
  REQUIRE(out.verdict == HookVerdict::kFailed);
  REQUIRE(out.message == "exited 0: result file is not a regular file (a symbolic link)");
}

TEST_CASE("a result file over the limit is an error that names its size and the limit") {
  Fixture f;
  const std::string content = R"({"delay_seconds": 5, "message": ")" + std::string(70000, 'm') + "\"}";
  f.runner.OnRun([&](const ActionRequest& req) { std::ofstream(ResultFile(req)) << content; });
  HookOutcome out = f.Run();
  REQUIRE(out.verdict == HookVerdict::kFailed);
  REQUIRE(out.message == "exited 0: result file is " + std::to_string(content.size()) + " bytes, the limit is 65536");
  REQUIRE_FALSE(out.delay.has_value());
}

TEST_CASE("whatever the hook leaves in its directory is removed with it") {
  Fixture f;
  f.runner.OnRun([](const ActionRequest& req) {
    const fs::path dir = fs::path(ResultFile(req)).parent_path();
    std::ofstream(dir / "extra.txt") << "left behind";
    fs::create_directories(dir / "a" / "b" / "c");
    std::ofstream(dir / "a" / "b" / "c" / "deep.txt") << "deeper";
    fs::create_symlink("/etc", dir / "etc-link");
    REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  });
  REQUIRE(f.Run().verdict == HookVerdict::kDone);
  REQUIRE(f.EntriesInWorkDir() == 0);
  REQUIRE(fs::exists("/etc/hostname"));
}

TEST_CASE("a scratch directory swapped for a link: the link goes, what it points to stays") {
  Fixture f;
  const std::string outside = f.work_dir + "-outside";
  fs::create_directories(outside);
  std::ofstream(outside + "/precious") << "keep me";
  f.runner.OnRun([&](const ActionRequest& req) {
    const fs::path dir = fs::path(ResultFile(req)).parent_path();
    fs::remove_all(dir);
    fs::create_directory_symlink(outside, dir);
    std::ofstream(dir / "result.json") << R"({"message": "written through the link"})";
  });
  HookOutcome out = f.Run();
  REQUIRE(out.verdict == HookVerdict::kDone);
  REQUIRE(out.message == "exited 0");  // the agent reads its own directory, not the link's target
  REQUIRE(f.EntriesInWorkDir() == 0);
  REQUIRE(fs::exists(outside + "/precious"));
  fs::remove_all(outside);
}
