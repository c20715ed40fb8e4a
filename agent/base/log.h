// Structured logging: one logfmt line per event, e.g.
//   2026-11-29T16:40:00.123Z level=info event="hook succeeded" object=ns/a uid=… handler=create next=idle
// Every line about an object carries object, uid and handler, and a `next` field saying what
// the agent will do next. Thread-safe: lines from several threads never interleave.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

namespace nodehook {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

struct LogField {
  std::string key;
  std::string value;
};

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {});

// Formats one line without writing it (exposed for tests).
std::string FormatLogLine(LogLevel level, std::string_view event, std::initializer_list<LogField> fields);

bool ParseLogLevel(std::string_view text, LogLevel* out);
void SetLogLevel(LogLevel level);
// Replaces the sink (default: stderr). Tests capture lines here.
void SetLogSink(std::function<void(const std::string& line)> sink);

}  // namespace nodehook
