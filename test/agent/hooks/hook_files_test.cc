#include <catch2/catch.hpp>

#include <string>

#include <sys/stat.h>

#include "agent/hooks/hook_call.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/scoped_umask.h"

namespace nodehook {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 07777;  // "missing" never equals a wanted mode
  return st.st_mode & 07777;
}

std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

TEST_CASE("hook input files and their directories are private to the agent's user even under umask 000") {
  ScopedUmask permissive(0);
  TempDir state_dir;
  const std::string work_dir = state_dir.File("hook-scratch");
  FakeRunner runner;
  std::map<std::string, mode_t> modes;
  runner.OnRun([&](const ActionRequest& request) {
    for (const char* name : {"NODEHOOK_OLD_FILE", "NODEHOOK_NEW_FILE", "NODEHOOK_DIFF_FILE"}) {
      modes[name] = ModeOf(FakeRunner::Env(request, name));
    }
    modes["run directory"] = ModeOf(DirOf(FakeRunner::Env(request, "NODEHOOK_NEW_FILE")));
    modes["scratch directory"] = ModeOf(work_dir);
  });
  HookSpec spec;
  spec.argv = {"/hooks/run"};
  HookInput input;
  input.reason = "update";
  input.old_object = R"({"spec":{"password":"old"}})";
  input.new_object = R"({"spec":{"password":"new"}})";
  CancelToken cancel;
  ScratchPool scratch(work_dir);
  RunHook(runner, spec, input, scratch, cancel);

  REQUIRE(runner.call_count() == 1);
  CHECK(modes["NODEHOOK_OLD_FILE"] == 0600);
  CHECK(modes["NODEHOOK_NEW_FILE"] == 0600);
  CHECK(modes["NODEHOOK_DIFF_FILE"] == 0600);
  CHECK(modes["run directory"] == 0700);
  CHECK(modes["scratch directory"] == 0700);
}

}  // namespace
}  // namespace nodehook
