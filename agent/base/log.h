// Structured logging: one line per event, logfmt by default, e.g.
//   ts=2026-11-29T16:40:00.123Z level=info event="hook succeeded" object=ns/a uid=… handler=create next=idle
// or one JSON object per line ({"ts":…,"level":…,"event":…,"object":…}) for log pipelines.
// Every line about an object carries object, uid and handler, and a `next` field saying what
// the agent will do next. Thread-safe: lines from several threads never interleave.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>
#include <string>
#include <string_view>

namespace nodehook {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kLogfmt, kJson };

struct LogField {
  std::string key;
  std::string value;
};

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields = {});
// The same, for lines whose fields are put together at run time.
void Log(LogLevel level, std::string_view event, const std::vector<LogField>& fields);

// Formats one line without writing it (exposed for tests).
std::string FormatLogLine(LogLevel level, std::string_view event, std::initializer_list<LogField> fields);

// Same, in the given format (exposed for tests).
std::string FormatLogLine(LogFormat format, LogLevel level, std::string_view event,
                          std::initializer_list<LogField> fields);

bool ParseLogLevel(std::string_view text, LogLevel* out);
void SetLogLevel(LogLevel level);
// Cheap check for call sites that build expensive debug fields.
bool LogEnabled(LogLevel level);
bool ParseLogFormat(std::string_view text, LogFormat* out);
void SetLogFormat(LogFormat format);
// Replaces the sink (default: stderr). Tests capture lines here.
void SetLogSink(std::function<void(const std::string& line)> sink);

}  // namespace nodehook
