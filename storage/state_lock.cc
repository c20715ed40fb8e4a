#include "storage/state_lock.h"

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "agent/base/mutex.h"
#include "agent/base/private_file.h"

namespace nodehook {
namespace {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  return UnavailableError(what + " " + path + ": " + std::strerror(err));
}

std::string SelfDescription() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  return "pid " + std::to_string(getpid()) + " on host " + host;
}

// The first line of what the lock file holds; "" when it is empty or unreadable.
std::string ReadHolder(int fd) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<size_t>(n));
  return text.substr(0, text.find('\n'));
}

// Replaces the lock file's content with who holds it; only the holder writes, so no race.
void WriteHolder(int fd) {
  std::string text = SelfDescription() + "\n";
  if (ftruncate(fd, 0) != 0) return;
  // Best effort: the description is for humans; the lock works without it.
  ssize_t ignored = pwrite(fd, text.data(), text.size(), 0);
  (void)ignored;
}

}  // namespace

std::string StateLock::LockPathFor(const std::string& state_file) { return state_file + ".lock"; }

std::string StateLock::DescribeHolder(const std::string& state_file) {
  std::ifstream in(LockPathFor(state_file));
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return "unknown";
  return line;
}

Result<std::optional<StateLock>> StateLock::TryAcquire(const std::string& state_file) {
  std::string path = LockPathFor(state_file);
  bool existed = access(path.c_str(), F_OK) == 0;
  // Private like the state: the holder's pid and host are nobody else's business.
  Result<int> opened = OpenPrivateFile(path, O_RDWR);
  if (!opened.ok()) return opened.status();
  int fd = *opened;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) return std::optional<StateLock>();
    return ErrnoStatus("cannot lock", path, err);
  }
  StateLock lock(fd, path);
  lock.lock_file_existed_ = existed;
  lock.previous_holder_ = ReadHolder(fd);
  WriteHolder(fd);
  return std::optional<StateLock>(std::move(lock));
}

Result<StateLock> StateLock::Acquire(const std::string& state_file, const CancelToken& cancel,
                                     const std::function<void(const std::string& holder)>& on_waiting,
                                     std::chrono::milliseconds poll) {
  Mutex mu;
  std::condition_variable cv;
  // Wakes the poll wait below at once when cancelled.
  CancelRegistration wake(cancel, [&] {
    MutexLock lock(&mu);
    cv.notify_all();
  });
  bool told = false;
  while (true) {
    Result<std::optional<StateLock>> attempt = TryAcquire(state_file);
    if (!attempt.ok()) return attempt.status();
    if (attempt->has_value()) return std::move(**attempt);
    if (!told) {
      told = true;
      if (on_waiting) on_waiting(DescribeHolder(state_file));
    }
    MutexLock lock(&mu);
    if (mu.WaitWith([&](std::unique_lock<std::mutex>& held) {
          return cv.wait_for(held, poll, [&] { return cancel.cancelled(); });
        })) {
      return Status(StatusCode::kCancelled, "stopped while waiting for the lock on " + LockPathFor(state_file));
    }
  }
}

StateLock::StateLock(StateLock&& other) noexcept
    : fd_(other.fd_),
      lock_path_(std::move(other.lock_path_)),
      lock_file_existed_(other.lock_file_existed_),
      previous_holder_(std::move(other.previous_holder_)) {
  other.fd_ = -1;
}

StateLock& StateLock::operator=(StateLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    lock_path_ = std::move(other.lock_path_);
    lock_file_existed_ = other.lock_file_existed_;
    previous_holder_ = std::move(other.previous_holder_);
    other.fd_ = -1;
  }
  return *this;
}

StateLock::~StateLock() { Release(); }

void StateLock::Release() {
  if (fd_ < 0) return;
  // Clear the description first so a reader never names a process that no longer holds the lock.
  if (ftruncate(fd_, 0) != 0) {
    // Harmless: the next holder overwrites it.
  }
  close(fd_);  // closing the last descriptor of the open file description releases the flock
  fd_ = -1;
}

}  // namespace nodehook
