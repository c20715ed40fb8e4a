// CapturedLog: collects the agent's log lines for the life of the object, instead of stderr.
// Thread-safe: the agent's threads log while the test reads. ScopedLogLevel turns on debug lines.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "agent/base/log.h"

namespace nodehook {

class CapturedLog {
 public:
  CapturedLog() {
    SetLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
  }
  ~CapturedLog() { SetLogSink(nullptr); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  // Lines containing `text`.
  int Count(const std::string& text) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& l : lines_) n += l.find(text) != std::string::npos;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Logs at `level` for the life of the object, then back at the default (info). Not for tests
// that run concurrently with others changing the level.
class ScopedLogLevel {
 public:
  explicit ScopedLogLevel(LogLevel level) { SetLogLevel(level); }
  ~ScopedLogLevel() { SetLogLevel(LogLevel::kInfo); }
  ScopedLogLevel(const ScopedLogLevel&) = delete;
  ScopedLogLevel& operator=(const ScopedLogLevel&) = delete;
};

}  // namespace nodehook
