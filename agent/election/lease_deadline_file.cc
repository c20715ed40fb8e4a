#include "agent/election/lease_deadline_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace nodehook {

Status WriteLeaseDeadline(const std::string& path, int64_t monotonic_ms) {
  // The directory (hook_work_dir) is otherwise made only by the first hook run.
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0 && mkdir(path.substr(0, slash).c_str(), 0700) != 0 && errno != EEXIST) {
    return InternalError("cannot create " + path.substr(0, slash) + ": " + std::strerror(errno));
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << monotonic_ms << "\n";
    out.flush();
    if (!out) return InternalError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return InternalError("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

int64_t ReadLeaseDeadline(const std::string& path) {
  std::ifstream in(path);
  long long value = 0;
  if (!(in >> value)) return 0;
  return value;
}

std::vector<std::string> FenceArgv(const std::string& path, int kill_delay_ms) {
  return {"/proc/self/exe", "fence", path, std::to_string(kill_delay_ms), "--"};
}

}  // namespace nodehook
