#include "storage/state_permissions.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <dirent.h>
#include <sys/stat.h>

#include "agent/base/private_file.h"
#include "storage/local_fs.h"
#include "storage/state_lock.h"

namespace nodehook {
namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWithAny(const std::string& name, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes) {
    if (name.compare(0, p.size(), p) == 0) return true;
  }
  return false;
}

// True when every entry of `dir` starts with one of `prefixes` (an unreadable dir counts as not).
bool HoldsOnly(const std::string& dir, const std::vector<std::string>& prefixes) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return false;
  while (const dirent* entry = ::readdir(d.get())) {
    std::string name = entry->d_name;
    if (name != "." && name != ".." && !StartsWithAny(name, prefixes)) return false;
  }
  return true;
}

// Tightens one path when it is looser than owner-only; records what changed.
Status Tighten(const std::string& path, const OwnedDir* dir, TightenedPermissions* out) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return UnavailableError("cannot stat " + path + ": " + std::strerror(errno));
  }
  // A symlink's target is not ours to judge; SQLite and the lock open the target as it is.
  if (S_ISLNK(st.st_mode) || !IsLooserThanOwnerOnly(st.st_mode)) return Status::Ok();
  if (dir != nullptr && ((st.st_mode & S_ISVTX) != 0 || !HoldsOnly(path, dir->own_prefixes))) {
    out->shared_dirs.push_back(path);
    return Status::Ok();
  }
  mode_t wanted = dir != nullptr ? kPrivateDirMode : kPrivateFileMode;
  if (::chmod(path.c_str(), wanted) != 0) {
    return UnavailableError("cannot make " + path + " private (chmod " + Octal(wanted) + "): " + std::strerror(errno));
  }
  out->changed.push_back(path + " " + Octal(st.st_mode) + "->" + Octal(wanted));
  return Status::Ok();
}

}  // namespace

std::vector<std::string> StateFilesOf(const std::string& state_file) {
  return {state_file, state_file + "-wal", state_file + "-shm", StateLock::LockPathFor(state_file)};
}

Result<TightenedPermissions> TightenStatePermissions(const std::string& state_file, const std::string& scratch) {
  TightenedPermissions out;
  // The state's own names cover the -wal, -shm, .lock and .corrupt-* files beside it.
  const std::string state_dir = StateDirectoryOf(state_file);
  OwnedDir state{state_dir, {BaseName(state_file)}};
  if (StateDirectoryOf(scratch) == state_dir) state.own_prefixes.push_back(BaseName(scratch));
  OwnedDir scratch_dir{scratch, {"hook-"}};
  NODEHOOK_RETURN_IF_ERROR(Tighten(state.path, &state, &out));
  NODEHOOK_RETURN_IF_ERROR(Tighten(scratch_dir.path, &scratch_dir, &out));
  for (const std::string& file : StateFilesOf(state_file)) NODEHOOK_RETURN_IF_ERROR(Tighten(file, nullptr, &out));
  return out;
}

}  // namespace nodehook
