#include "agent/base/private_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nodehook {
namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  return UnavailableError(what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<int> OpenPrivateFile(const std::string& path, int flags) {
  flags |= O_CLOEXEC;
  // O_EXCL first, so we know whether this call created the file and may set its mode.
  int fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL, kPrivateFileMode);
  if (fd >= 0) {
    // The umask may have taken bits the owner needs; the mode must not depend on it.
    if (::fchmod(fd, kPrivateFileMode) != 0) {
      Status error = ErrnoError("cannot set the mode of", path);
      ::close(fd);
      return error;
    }
    return fd;
  }
  if (errno != EEXIST) return ErrnoError("cannot create", path);
  fd = ::open(path.c_str(), flags);
  if (fd < 0) return ErrnoError("cannot open", path);
  return fd;
}

Status CreatePrivateFileIfMissing(const std::string& path) {
  Result<int> fd = OpenPrivateFile(path, O_RDWR);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  return Status::Ok();
}

Status WritePrivateFile(const std::string& path, const std::string& content) {
  Result<int> fd = OpenPrivateFile(path, O_WRONLY | O_TRUNC | O_NOFOLLOW);
  if (!fd.ok()) return fd.status();
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(*fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status error = ErrnoError("cannot write", path);
      ::close(*fd);
      return error;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(*fd) != 0) return ErrnoError("cannot write", path);
  return Status::Ok();
}

Status CreatePrivateDirIfMissing(const std::string& path) {
  if (::mkdir(path.c_str(), kPrivateDirMode) != 0) {
    if (errno == EEXIST) return Status::Ok();
    return ErrnoError("cannot create directory", path);
  }
  if (::chmod(path.c_str(), kPrivateDirMode) != 0) return ErrnoError("cannot set the mode of", path);
  return Status::Ok();
}

}  // namespace nodehook
