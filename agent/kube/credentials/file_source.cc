#include "agent/kube/credentials/file_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/kube/transport/log_limiter.h"

namespace nodehook {

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string why = "cannot read " + path + ": " + std::strerror(err);
    return err == ENOENT ? NotFoundError(why) : InvalidError(why);
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return InvalidError("cannot read " + path + ": read error");
  return content.str();
}

std::string TrimWhitespace(const std::string& text) {
  const char* kSpace = " \t\r\n";
  size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

RotatingToken RotatingTokenSource(std::string path, std::string initial, Clock& clock, Duration refresh) {
  struct State {
    State(std::string p, std::string t, TimePoint now) : path(std::move(p)), token(std::move(t)), last_read(now) {}
    Mutex mu;
    std::string path;
    std::string token GUARDED_BY(mu);
    TimePoint last_read GUARDED_BY(mu);
  };
  auto state = std::make_shared<State>(std::move(path), std::move(initial), clock.Now());
  Clock* clock_ptr = &clock;
  auto read_locked = [state, clock_ptr]() {
    state->mu.AssertHeld();  // both callers hold it
    state->last_read = clock_ptr->Now();
    auto content = ReadWholeFile(state->path);
    if (!content.ok()) {
      Log(LogLevel::kWarn, "token file unreadable",
          {{"path", state->path}, {"error", content.status().message()}, {"next", "keep last token"}});
    } else {
      state->token = TrimWhitespace(*content);
    }
    return state->token;
  };
  RotatingToken source;
  source.current = [state, clock_ptr, refresh, read_locked]() {
    MutexLock lock(&state->mu);
    if (clock_ptr->Now() - state->last_read < refresh) return state->token;
    return read_locked();
  };
  source.reload = [state, read_locked](const std::string&) {
    MutexLock lock(&state->mu);
    return read_locked();
  };
  return source;
}

namespace {

struct FileIdentity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;

  bool operator==(const FileIdentity& o) const {
    return exists == o.exists && device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
  }
};

FileIdentity Identify(const std::string& path) {
  struct stat st {};
  FileIdentity id;
  if (::stat(path.c_str(), &st) != 0) return id;
  id.exists = true;
  id.device = st.st_dev;
  id.inode = st.st_ino;
  id.size = st.st_size;
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return id;
}

}  // namespace

std::function<std::string()> WatchedFileContent(std::string path, std::string initial) {
  struct State {
    State(std::string p, std::string c) : path(std::move(p)), content(std::move(c)), identity(Identify(path)) {}
    Mutex mu;
    std::string path;
    std::string content GUARDED_BY(mu);
    FileIdentity identity GUARDED_BY(mu);
    LogLimiter warnings{SystemClock::Instance()};
  };
  auto state = std::make_shared<State>(std::move(path), std::move(initial));
  return [state]() {
    MutexLock lock(&state->mu);
    FileIdentity now = Identify(state->path);
    if (now == state->identity) return state->content;
    auto content = ReadWholeFile(state->path);
    int suppressed = 0;
    if (!content.ok()) {
      if (state->warnings.Allow(&suppressed)) {
        Log(LogLevel::kWarn, "file unreadable",
            {{"path", state->path}, {"error", content.status().message()},
             {"suppressed", suppressed}, {"next", "keep last contents; check again on next use"}});
      }
      return state->content;  // identity unchanged: the next call tries again
    }
    state->identity = now;
    state->content = std::move(content).value();
    return state->content;
  };
}

}  // namespace nodehook
