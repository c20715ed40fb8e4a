#include "agent/config/hook_programs.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nodehook {

std::string ProgramProblem(const std::string& program) {
  const std::string what = "hook program " + program;
  struct stat st {};
  if (::stat(program.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return what + " does not exist";
    return what + " cannot be examined: " + std::strerror(errno);
  }
  if (S_ISDIR(st.st_mode)) return what + " is a directory, not a program";
  if (!S_ISREG(st.st_mode)) return what + " is not a regular file";
  // AT_EACCESS: judged as the effective user, the one that will exec it.
  if (::faccessat(AT_FDCWD, program.c_str(), X_OK, AT_EACCESS) != 0) {
    return what + " is not executable by this user (uid " + std::to_string(::geteuid()) + "): " +
           std::strerror(errno);
  }
  return "";
}

namespace {

void CheckHookProgram(const HookSpec& hook, const std::string& path, const ProgramCheck& check, Diagnostics& diag) {
  // A hook without an absolute program was already reported by the parser.
  if (hook.argv.empty() || hook.argv[0].empty() || hook.argv[0][0] != '/') return;
  std::string problem = check(hook.argv[0]);
  if (problem.empty()) return;
  diag.Error(ElementPath(ChildPath(path, "argv"), 0),
             problem + " (install it, fix the path, or set skip_hook_checks; to check the file away from the "
                       "node: check-config --offline)");
}

}  // namespace

void CheckHookPrograms(const Config& config, const ProgramCheck& check, Diagnostics& diag) {
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const WatchedResource& resource = config.resources[i];
    const std::string path = ElementPath("resources", i);
    for (const auto& [reason, hook] : resource.hooks) CheckHookProgram(hook, path + ".hooks." + reason, check, diag);
    if (resource.rollout && resource.rollout->verify) {
      CheckHookProgram(*resource.rollout->verify, path + ".rollout.verify", check, diag);
    }
  }
}

}  // namespace nodehook
