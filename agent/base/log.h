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
#include <type_traits>
#include <utility>

namespace nodehook {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kLogfmt, kJson };

// One key=value pair. The value's type is taken from the argument, so call sites stay short:
// {"object", key} is text, {"retries", 3} a number and {"in_memory", true} a boolean. logfmt
// prints all three the same way; JSON prints numbers and booleans unquoted.
struct LogField {
  enum class Kind { kText, kNumber, kBool };

  LogField(std::string key_in, std::string value_in) : key(std::move(key_in)), value(std::move(value_in)) {}
  LogField(std::string key_in, const char* value_in) : key(std::move(key_in)), value(value_in) {}
  LogField(std::string key_in, std::string_view value_in) : key(std::move(key_in)), value(value_in) {}
  LogField(std::string key_in, bool value_in)
      : key(std::move(key_in)), value(value_in ? "true" : "false"), kind(Kind::kBool) {}
  template <typename Integer, typename = std::enable_if_t<std::is_integral_v<Integer> &&
                                                          !std::is_same_v<Integer, bool> && !std::is_same_v<Integer, char>>>
  LogField(std::string key_in, Integer value_in)
      : key(std::move(key_in)), value(std::to_string(value_in)), kind(Kind::kNumber) {}
  // Would silently become a boolean: format the number (with its unit) as text instead.
  LogField(std::string key_in, double value_in) = delete;
  LogField(std::string key_in, const void* value_in) = delete;

  std::string key;
  std::string value;
  Kind kind = Kind::kText;
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
