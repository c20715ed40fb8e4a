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

// A bearer-token callback: returns the file's trimmed contents, re-reading `path` at most once
// per `refresh` of `clock` time (projected service-account tokens rotate about hourly).
// `initial` is served until the first refresh is due. A failed re-read keeps the last good
// token and logs a warning. `clock` must outlive the callback. Safe to call from any thread.
std::function<std::string()> RotatingTokenFile(std::string path, std::string initial, Clock& clock,
                                               Duration refresh = std::chrono::minutes(1));

// Leading and trailing whitespace removed (token files usually end with a newline).
std::string TrimWhitespace(const std::string& text);

}  // namespace nodehook
