#include "agent/kube/file_source.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "agent/base/log.h"

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

std::function<std::string()> RotatingTokenFile(std::string path, std::string initial, Clock& clock,
                                               Duration refresh) {
  struct State {
    std::mutex mu;
    std::string path;
    std::string token;     // guarded by mu
    TimePoint last_read;   // guarded by mu
  };
  auto state = std::make_shared<State>();
  state->path = std::move(path);
  state->token = std::move(initial);
  state->last_read = clock.Now();
  Clock* clock_ptr = &clock;
  return [state, clock_ptr, refresh]() {
    std::lock_guard<std::mutex> lock(state->mu);
    TimePoint now = clock_ptr->Now();
    if (now - state->last_read < refresh) return state->token;
    state->last_read = now;
    auto content = ReadWholeFile(state->path);
    if (!content.ok()) {
      Log(LogLevel::kWarn, "token file unreadable",
          {{"path", state->path}, {"error", content.status().message()}, {"next", "keep last token"}});
    } else {
      state->token = TrimWhitespace(*content);
    }
    return state->token;
  };
}

}  // namespace nodehook
