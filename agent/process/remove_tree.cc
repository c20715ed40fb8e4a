#include "agent/process/remove_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <vector>

#include "agent/process/spawn.h"
#include "agent/process/unique_fd.h"

namespace nodehook {
namespace {

// `shown` is the path named in error messages, relative to where the removal started.
Status RemoveContentsBelow(int dir_fd, const std::string& shown, dev_t device, int depth);

Status Failed(const std::string& what, const std::string& shown, int err) {
  return InternalError("cannot " + what + " " + shown + ": " + ErrnoText(err));
}

// Names first, then removal: unlinking while readdir() walks the same directory may skip entries.
Result<std::vector<std::string>> ListNames(int dir_fd, const std::string& shown) {
  UniqueFd own(fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!own.valid()) return Failed("read directory", shown, errno);
  DIR* dir = fdopendir(own.get());
  if (dir == nullptr) return Failed("read directory", shown, errno);
  own.Release();  // closedir closes it
  rewinddir(dir);  // the duplicate shares the offset of `dir_fd`
  std::vector<std::string> names;
  errno = 0;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  const int err = errno;
  closedir(dir);
  if (err != 0) return Failed("read directory", shown, err);
  return names;
}

Status RemoveEntryBelow(int dir_fd, const std::string& name, const std::string& shown, dev_t device, int depth) {
  if (unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return Failed("remove", shown, errno);
  // A directory. O_NOFOLLOW: if it was swapped for a link meanwhile, the open fails instead of following it.
  UniqueFd sub(openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!sub.valid()) return Failed("open directory", shown, errno);
  struct stat st {};
  if (fstat(sub.get(), &st) != 0) return Failed("stat", shown, errno);
  if (st.st_dev != device) return InternalError("not removing " + shown + ": another file system is mounted there");
  if (depth >= kMaxRemoveDepth) {
    return InternalError("not removing " + shown + ": nested deeper than " + std::to_string(kMaxRemoveDepth) +
                         " levels");
  }
  NODEHOOK_RETURN_IF_ERROR(RemoveContentsBelow(sub.get(), shown, device, depth + 1));
  if (unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return Failed("remove", shown, errno);
  return Status::Ok();
}

Status RemoveContentsBelow(int dir_fd, const std::string& shown, dev_t device, int depth) {
  auto names = ListNames(dir_fd, shown);
  if (!names.ok()) return names.status();
  Status first_error;
  for (const std::string& name : *names) {
    Status removed = RemoveEntryBelow(dir_fd, name, shown + "/" + name, device, depth);
    if (first_error.ok() && !removed.ok()) first_error = removed;  // go on: remove what can be removed
  }
  return first_error;
}

Result<dev_t> DeviceOf(int dir_fd, const std::string& shown) {
  struct stat st {};
  if (fstat(dir_fd, &st) != 0) return Failed("stat", shown, errno);
  return st.st_dev;
}

}  // namespace

Status RemoveEntryAt(int dir_fd, const std::string& name, const std::string& shown) {
  auto device = DeviceOf(dir_fd, shown);
  if (!device.ok()) return device.status();
  return RemoveEntryBelow(dir_fd, name, shown, *device, 0);
}

bool IsScratchDirName(const std::string& name) {
  static const std::string kPrefix = "hook-";
  if (name.size() != kPrefix.size() + 6 || name.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  for (size_t i = kPrefix.size(); i < name.size(); ++i) {
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

Result<int> SweepScratchDirs(const std::string& work_dir) {
  UniqueFd dir(open(work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid() && errno == ENOENT) return 0;
  if (!dir.valid()) return Failed("open", work_dir, errno);
  auto names = ListNames(dir.get(), work_dir);
  if (!names.ok()) return names.status();
  int removed = 0;
  Status first_error;
  for (const std::string& name : *names) {
    if (!IsScratchDirName(name)) continue;
    Status st = RemoveEntryAt(dir.get(), name, work_dir + "/" + name);
    if (st.ok()) ++removed;
    if (first_error.ok() && !st.ok()) first_error = st;  // go on with the others
  }
  if (!first_error.ok()) return first_error;
  return removed;
}

}  // namespace nodehook
