// File reading for credentials: whole files, and a bearer-token callback that follows a
// rotating token file. Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/status.h"

namespace nodehook {

// The file's bytes; kNotFound / kInvalid naming the path and the OS error otherwise.
Result<std::string> ReadWholeFile(const std::string& path);

// A token file followed as it rotates. `current` returns the file's trimmed contents,
// re-reading `path` at most once per `refresh` of `clock` time (projected service-account tokens
// rotate about hourly); `initial` is served until the first refresh is due. `reload` re-reads the
// file now and returns the result (the transport calls it after a 401); `current` then returns it
// too (whatever token was rejected: the file is the only source). A failed re-read keeps the
// last good token and logs a warning. `clock` must outlive both callbacks. Safe to call from
// any thread.
struct RotatingToken {
  std::function<std::string()> current;
  std::function<std::string(const std::string& rejected)> reload;
};
RotatingToken RotatingTokenSource(std::string path, std::string initial, Clock& clock,
                                  Duration refresh = std::chrono::minutes(1));

// A file's contents, followed as it changes: each call stat()s `path` and re-reads it when its
// modification time, size or inode differ from the last read (a CA bundle replaced in place or
// through a symlink swap, as Kubernetes does for mounted secrets). `initial` is what was read at
// start. A failed read keeps the last good contents and logs a warning at most once a minute.
// Safe to call from any thread.
std::function<std::string()> WatchedFileContent(std::string path, std::string initial);

// Leading and trailing whitespace removed (token files usually end with a newline).
std::string TrimWhitespace(const std::string& text);

}  // namespace nodehook
