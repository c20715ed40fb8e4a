#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "agent/config/hook_programs.h"
#include "test/agent/config/config_test_util.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

// A directory with one program of each kind a config might name.
class HookDir {
 public:
  HookDir() {
    Write("run", 0755);
    Write("not-executable", 0644);
    REQUIRE(mkdir(dir_.File("a-directory").c_str(), 0755) == 0);
  }
  std::string operator/(const std::string& name) const { return dir_.File(name); }

 private:
  void Write(const std::string& name, mode_t mode) {
    std::ofstream(dir_.File(name)) << "#!/bin/sh\nexit 0\n";
    REQUIRE(chmod(dir_.File(name).c_str(), mode) == 0);
  }
  TempDir dir_;
};

// One resource whose create, update and delete hooks run the given programs, one per line.
std::string ConfigWithHooks(const std::string& create, const std::string& update, const std::string& del,
                            const std::string& extra = "") {
  return "{\"state_file\": \"/s.db\",\n"
         "\"resources\": [{\"version\": \"v1\", \"plural\": \"w\", \"hooks\": {\n"
         "  \"create\": {\"argv\": [\"" + create + "\"]},\n"
         "  \"update\": {\"argv\": [\"" + update + "\", \"--flag\"]},\n"
         "  \"delete\": {\"argv\": [\"" + del + "\"]}}}]" + (extra.empty() ? "" : ",\n" + extra) + "}";
}

ConfigSources OnThisMachine(std::map<std::string, std::string> env = {{"NODE_NAME", "n"}},
                            std::map<std::string, std::string> flags = {}) {
  ConfigSources sources = Sources(std::move(env), std::move(flags));
  sources.check_program = ProgramProblem;
  return sources;
}

const char* const kHint =
    " (install it, fix the path, or set skip_hook_checks; to check the file away from the node: check-config "
    "--offline)";

}  // namespace

TEST_CASE("each hook whose program is missing, not a file or not executable is reported at its argv[0] line") {
  HookDir dir;
  ConfigResult result =
      ParseConfig(ConfigWithHooks(dir / "missing", dir / "not-executable", dir / "a-directory"), OnThisMachine());
  REQUIRE(result.errors.size() == 3);
  const ConfigError* create = FindError(result, "resources[0].hooks.create.argv[0]");
  REQUIRE(create != nullptr);
  CHECK(create->line == 3);
  CHECK(create->message == "hook program " + dir / "missing" + " does not exist" + kHint);
  const ConfigError* update = FindError(result, "resources[0].hooks.update.argv[0]");
  REQUIRE(update != nullptr);
  CHECK(update->line == 4);
  CHECK(update->message == "hook program " + dir / "not-executable" + " is not executable by this user (uid " +
                               std::to_string(geteuid()) + "): Permission denied" + kHint);
  const ConfigError* del = FindError(result, "resources[0].hooks.delete.argv[0]");
  REQUIRE(del != nullptr);
  CHECK(del->line == 5);
  CHECK(del->message == "hook program " + dir / "a-directory" + " is a directory, not a program" + kHint);
}

TEST_CASE("hooks whose programs exist and are executable pass") {
  HookDir dir;
  ConfigResult result = ParseConfig(ConfigWithHooks(dir / "run", dir / "run", "/bin/sh"), OnThisMachine());
  INFO(AllErrors(result));
  CHECK(result.ok());
}

TEST_CASE("a hook program that is not an absolute path is refused even without looking at the machine") {
  ConfigResult result = ParseConfig(ConfigWithHooks("widget-hook", "/h", "./hooks/run"), Sources({{"NODE_NAME", "n"}}));
  REQUIRE(result.errors.size() == 2);
  const ConfigError* create = FindError(result, "resources[0].hooks.create.argv[0]");
  REQUIRE(create != nullptr);
  CHECK(create->line == 3);
  CHECK(create->message == "expected an absolute path to the hook program, e.g. \"/hooks/run\", got \"widget-hook\"");
  REQUIRE(FindError(result, "resources[0].hooks.delete.argv[0]") != nullptr);
}

TEST_CASE("skip_hook_checks from a flag, the environment or the file leaves the programs unchecked") {
  HookDir dir;
  std::string text = ConfigWithHooks(dir / "missing", dir / "not-executable", dir / "a-directory");
  CHECK(ParseConfig(text, OnThisMachine({{"NODE_NAME", "n"}}, {{"skip_hook_checks", "true"}})).ok());
  CHECK(ParseConfig(text, OnThisMachine({{"NODE_NAME", "n"}, {"NODEHOOK_SKIP_HOOK_CHECKS", "true"}})).ok());
  CHECK(ParseConfig(ConfigWithHooks(dir / "missing", dir / "run", dir / "run", "\"skip_hook_checks\": true"),
                    OnThisMachine())
            .ok());
  CHECK_FALSE(ParseConfig(text, OnThisMachine({{"NODE_NAME", "n"}}, {{"skip_hook_checks", "false"}})).ok());
}

TEST_CASE("check-config exits 2 naming the file and line of a hook program that does not exist") {
  HookDir dir;
  std::string file = dir / "config.json";
  std::ofstream(file) << ConfigWithHooks(dir / "run", dir / "run", dir / "gone");
  std::ostringstream out, err;
  CHECK(RunCheckConfig(file, OnThisMachine(), out, err) == 2);
  CHECK(err.str() == file + ":5: resources[0].hooks.delete.argv[0]: hook program " + dir / "gone" +
                         " does not exist" + kHint + "\n" + file +
                         ": to check the file alone, off the node (no hook programs, no credentials): "
                         "nodehook check-config --offline " + file + "\n");
  std::ostringstream out2, err2;
  CHECK(RunCheckConfig(file, OnThisMachine({{"NODE_NAME", "n"}}, {{"skip_hook_checks", "true"}}), out2, err2) == 0);
}

TEST_CASE("the environment sources check hook programs on this machine") {
  ConfigSources sources = EnvironmentSources();
  REQUIRE(sources.check_program);
  CHECK(sources.check_program("/bin/sh").empty());
  CHECK(sources.check_program("/nonexistent/hook") == "hook program /nonexistent/hook does not exist");
}
