#include <catch2/catch.hpp>

#include "agent/process/exec_plan.h"

using nodehook::ActionRequest;
using nodehook::BaseEnvironment;
using nodehook::MakeExecPlan;
using nodehook::MergeEnvironment;
using nodehook::ProgramCandidates;

TEST_CASE("the request's env overrides the agent's in place and adds new keys at the end") {
  const char* base[] = {"HOME=/root", "MODE=agent", "PATH=/bin", nullptr};
  auto env = MergeEnvironment(base, {{"MODE", "hook"}, {"EXTRA", "a=b"}});
  REQUIRE(env == std::vector<std::string>{"HOME=/root", "MODE=hook", "PATH=/bin", "EXTRA=a=b"});
}

TEST_CASE("a key repeated in the request takes its last value") {
  const char* base[] = {nullptr};
  REQUIRE(MergeEnvironment(base, {{"K", "1"}, {"K", "2"}}) == std::vector<std::string>{"K=2"});
}

TEST_CASE("a program name with a slash is used as is") {
  REQUIRE(ProgramCandidates("./hooks/run", std::string("/bin")) == std::vector<std::string>{"./hooks/run"});
}

TEST_CASE("a bare program name is tried in every PATH entry, an empty entry meaning the current directory") {
  REQUIRE(ProgramCandidates("hook", std::string("/opt/bin::/usr/bin")) ==
          std::vector<std::string>{"/opt/bin/hook", "./hook", "/usr/bin/hook"});
}

TEST_CASE("without PATH a bare name is searched where execvp would search") {
  REQUIRE(ProgramCandidates("hook", std::nullopt) == std::vector<std::string>{"/bin/hook", "/usr/bin/hook"});
}

TEST_CASE("an empty program name has nowhere to be found") { REQUIRE(ProgramCandidates("", std::nullopt).empty()); }

TEST_CASE("the PATH search uses the hook's PATH when the request overrides it") {
  const char* base[] = {"PATH=/agent/bin", nullptr};
  ActionRequest request;
  request.argv = {"hook", "--flag"};
  request.env = {{"PATH", "/hook/bin"}};
  auto plan = MakeExecPlan(request, std::make_shared<BaseEnvironment>(base));
  REQUIRE(plan.candidates == std::vector<std::string>{"/hook/bin/hook"});
  REQUIRE(plan.argv == request.argv);
}

TEST_CASE("without an override the PATH search uses the agent's PATH") {
  const char* base[] = {"PATH=/agent/bin:/bin", nullptr};
  ActionRequest request;
  request.argv = {"hook"};
  auto plan = MakeExecPlan(request, std::make_shared<BaseEnvironment>(base));
  REQUIRE(plan.candidates == std::vector<std::string>{"/agent/bin/hook", "/bin/hook"});
}

std::vector<std::string> Texts(const std::vector<char*>& envp) {
  REQUIRE(!envp.empty());
  REQUIRE(envp.back() == nullptr);
  return std::vector<std::string>(envp.begin(), envp.end() - 1);
}

TEST_CASE("the base environment keeps the first of a repeated key, as getenv does") {
  const char* base[] = {"A=1", "B=2", "A=3", "NOVALUE", nullptr};
  const BaseEnvironment env(base);
  REQUIRE(Texts(env.Envp({})) == std::vector<std::string>{"A=1", "B=2", "NOVALUE"});
  REQUIRE(env.Get("A") == std::optional<std::string>("1"));
  REQUIRE(env.Get("NOVALUE") == std::nullopt);
  REQUIRE(env.Get("C") == std::nullopt);
}

TEST_CASE("one base environment serves many hooks, each with its own overrides") {
  const char* base[] = {"HOME=/root", "MODE=agent", nullptr};
  const BaseEnvironment env(base);
  const std::vector<std::string> first = {"MODE=hook", "UID=a"};
  const std::vector<std::string> second = {"UID=b", "UID=c"};
  REQUIRE(Texts(env.Envp(first)) == std::vector<std::string>{"HOME=/root", "MODE=hook", "UID=a"});
  REQUIRE(Texts(env.Envp(second)) == std::vector<std::string>{"HOME=/root", "MODE=agent", "UID=c"});
}
