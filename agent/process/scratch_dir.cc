#include "agent/process/scratch_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include <vector>

#include "agent/process/remove_tree.h"
#include "agent/process/spawn.h"

namespace nodehook {
namespace {

const char* FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a plain file";
}

Status WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InternalError(ErrnoText(errno));
    content.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// Ours for the life of the process (the agent never changes its user): one system call, not one
// per hook run.
uid_t OwnUid() {
  static const uid_t uid = geteuid();
  return uid;
}

}  // namespace

ScratchDir::ScratchDir(UniqueFd parent, UniqueFd dir, std::string name, std::string path)
    : parent_fd_(std::move(parent)), dir_fd_(std::move(dir)), name_(std::move(name)), path_(std::move(path)) {
  struct stat st {};
  if (fstat(dir_fd_.get(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

ScratchDir::~ScratchDir() {
  // Best effort: what cannot be removed now is swept when the next agent starts.
  if (dir_fd_.valid()) (void)Remove();
}

Result<ScratchDir> ScratchDir::Create(const std::string& work_dir) {
  const std::string where = "cannot create a scratch directory under " + work_dir + ": ";
  if (mkdir(work_dir.c_str(), 0700) != 0 && errno != EEXIST) return UnavailableError(where + ErrnoText(errno));
  UniqueFd parent(open(work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.valid()) return UnavailableError(where + ErrnoText(errno));
  std::string templ = work_dir + "/hook-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return UnavailableError(where + ErrnoText(errno));
  std::string path = buf.data();
  std::string name = path.substr(work_dir.size() + 1);
  // No hook knows the name yet, so this is the directory mkdtemp made.
  UniqueFd dir(openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) {
    const int err = errno;
    unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR);
    return UnavailableError(where + ErrnoText(err));
  }
  return ScratchDir(std::move(parent), std::move(dir), std::move(name), std::move(path));
}

Status ScratchDir::WriteFile(std::string_view name, std::string_view content) const {
  const std::string file(name);
  known_names_.push_back(file);
  UniqueFd fd(openat(dir_fd_.get(), file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  Status written = fd.valid() ? WriteAll(fd.get(), content) : InternalError(ErrnoText(errno));
  if (!written.ok()) return InternalError("cannot write " + PathOf(name) + ": " + written.message());
  return Status::Ok();
}

Result<std::optional<std::string>> ScratchDir::ReadHookFile(std::string_view name, std::string_view what,
                                                            size_t limit) const {
  const std::string file(name);
  const std::string label(what);
  known_names_.push_back(file);
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer that never comes.
  UniqueFd fd(openat(dir_fd_.get(), file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) return std::optional<std::string>();
  if (!fd.valid() && errno == ELOOP) return InvalidError(label + " is not a regular file (a symbolic link)");
  if (!fd.valid()) return InvalidError("cannot open " + label + ": " + ErrnoText(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return InvalidError("cannot stat " + label + ": " + ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return InvalidError(label + " is not a regular file (" + FileTypeName(st.st_mode) + ")");
  const auto too_large = [&](const std::string& size) {
    return InvalidError(label + " is " + size + " bytes, the limit is " + std::to_string(limit));
  };
  if (static_cast<unsigned long long>(st.st_size) > limit) return too_large(std::to_string(st.st_size));
  // One byte more than the limit tells a file that grew since fstat (a writer still at work).
  std::string content(limit + 1, '\0');
  size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = read(fd.get(), &content[got], content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidError("cannot read " + label + ": " + ErrnoText(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > limit) return too_large("more than " + std::to_string(limit));
  content.resize(got);
  return std::optional<std::string>(std::move(content));
}

bool ScratchDir::ClearForReuse() {
  if (!dir_fd_.valid()) return false;
  for (const std::string& known : known_names_) unlinkat(dir_fd_.get(), known.c_str(), 0);
  known_names_.clear();
  struct stat entry {};
  struct stat self {};
  if (fstatat(parent_fd_.get(), name_.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0 || entry.st_dev != dev_ ||
      entry.st_ino != ino_ || fstat(dir_fd_.get(), &self) != 0 || (self.st_mode & 07777) != 0700 ||
      self.st_uid != OwnUid()) {
    return false;
  }
  // Empty when one read of its entries finds only "." and "..".
  if (lseek(dir_fd_.get(), 0, SEEK_SET) != 0) return false;
  alignas(8) char buf[1024];
  const long n = syscall(SYS_getdents64, dir_fd_.get(), buf, sizeof buf);
  if (n <= 0) return false;
  for (long at = 0; at < n;) {
    const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
    if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) return false;
    at += d->d_reclen;
  }
  return syscall(SYS_getdents64, dir_fd_.get(), buf, sizeof buf) == 0;
}

Status ScratchDir::Remove() {
  if (!dir_fd_.valid()) return Status::Ok();
  // Through the directory's own descriptor, so a hook that swapped it for a link changes nothing;
  // unlinkat without AT_REMOVEDIR never removes a directory the hook made under a known name.
  for (const std::string& known : known_names_) unlinkat(dir_fd_.get(), known.c_str(), 0);
  dir_fd_.Reset();
  struct stat entry {};
  // Only our own directory by the same name, and only when it is empty now (else ENOTEMPTY).
  if (fstatat(parent_fd_.get(), name_.c_str(), &entry, AT_SYMLINK_NOFOLLOW) == 0 && entry.st_dev == dev_ &&
      entry.st_ino == ino_ && unlinkat(parent_fd_.get(), name_.c_str(), AT_REMOVEDIR) == 0) {
    return Status::Ok();
  }
  return RemoveEntryAt(parent_fd_.get(), name_, path_);
}

}  // namespace nodehook
