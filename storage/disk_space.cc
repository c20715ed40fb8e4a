#include "storage/disk_space.h"

#include <cerrno>
#include <cstring>

#include <sys/statvfs.h>
#include <unistd.h>

namespace nodehook {

Result<uint64_t> FreeBytes(const std::string& dir) {
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0) {
    return UnavailableError("cannot read the free space of " + dir + ": " + std::strerror(errno));
  }
  uint64_t blocks = geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail;
  return static_cast<uint64_t>(blocks) * vfs.f_frsize;
}

std::string NoSpaceMessage(const std::string& dir, uint64_t free_bytes) {
  return "no space left on " + dir + " (" + std::to_string(free_bytes) + " bytes free)";
}

std::string NoSpaceIfFull(const std::string& dir, int system_errno) {
  Result<uint64_t> free_bytes = FreeBytes(dir);
  if (!free_bytes.ok()) return "";
  bool out_of_space = system_errno == ENOSPC || system_errno == EDQUOT;
  if (!out_of_space && *free_bytes >= kStateLowSpaceBytes) return "";
  return NoSpaceMessage(dir, *free_bytes);
}

}  // namespace nodehook
