#include "agent/pipeline/hook_work_dir.h"

namespace nodehook {

std::string DefaultHookWorkDir(const std::string& state_file) {
  size_t slash = state_file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : state_file.substr(0, slash);
  if (dir.empty()) dir = "/";
  return dir + "/hook-scratch";
}

std::string HookWorkDir(const Config& config) {
  return config.tuning.hook_work_dir.empty() ? DefaultHookWorkDir(config.state_file) : config.tuning.hook_work_dir;
}

}  // namespace nodehook
