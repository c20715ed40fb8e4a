#include "agent/process/memory_work_dir.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "agent/process/spawn.h"

namespace nodehook {
namespace {

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

uint64_t Fnv1a64(const std::string& text) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

Status CheckMemoryBacked(const std::string& root) {
  struct statfs info {};
  if (statfs(root.c_str(), &info) != 0) return UnavailableError("cannot statfs: " + ErrnoText(errno));
  if (info.f_type != TMPFS_MAGIC && info.f_type != RAMFS_MAGIC) {
    return InvalidError("not a memory-backed file system (tmpfs or ramfs)");
  }
  return Status::Ok();
}

// The entry at `dir` must be our own directory; one that is ours but loose is tightened.
Status CheckOwnDirectory(const std::string& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return UnavailableError("cannot stat " + dir + ": " + ErrnoText(errno));
  if (!S_ISDIR(st.st_mode)) return InvalidError(dir + " exists and is not a directory");
  if (st.st_uid != geteuid()) {
    return InvalidError(dir + " is owned by uid " + std::to_string(st.st_uid) + ", not by this agent (uid " +
                        std::to_string(geteuid()) + ")");
  }
  if ((st.st_mode & 07777) != 0700 && chmod(dir.c_str(), 0700) != 0) {
    return UnavailableError("cannot make " + dir + " private (chmod 0700): " + ErrnoText(errno));
  }
  return Status::Ok();
}

}  // namespace

std::string MemoryWorkDirName(const std::string& state_file) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, Fnv1a64(Absolute(state_file)));
  return std::string("nodehook-") + hex;
}

Result<std::string> PrivateMemoryWorkDir(const std::string& root, const std::string& state_file) {
  NODEHOOK_RETURN_IF_ERROR(CheckMemoryBacked(root));
  const std::string dir = root + "/" + MemoryWorkDirName(state_file);
  // mkdir never follows a link at the last component; in a sticky root like /dev/shm nobody else
  // can rename or remove our entry once it is checked.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return UnavailableError("cannot create " + dir + ": " + ErrnoText(errno));
  }
  NODEHOOK_RETURN_IF_ERROR(CheckOwnDirectory(dir));
  return dir;
}

std::optional<std::string> ChooseMemoryWorkDir(const std::vector<std::string>& roots, const std::string& state_file,
                                               std::vector<std::string>* refused) {
  for (const std::string& root : roots) {
    if (root.empty()) continue;
    Result<std::string> dir = PrivateMemoryWorkDir(root, state_file);
    if (dir.ok()) return *dir;
    if (refused != nullptr) refused->push_back(root + ": " + dir.status().message());
  }
  return std::nullopt;
}

std::vector<std::string> DefaultMemoryRoots() {
  std::vector<std::string> roots;
  if (const char* runtime = getenv("XDG_RUNTIME_DIR"); runtime != nullptr && runtime[0] == '/') {
    roots.emplace_back(runtime);
  }
  roots.emplace_back("/dev/shm");
  return roots;
}

}  // namespace nodehook
