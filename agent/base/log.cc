#include "agent/base/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/utc_time.h"

namespace nodehook {
namespace {

std::atomic<int> g_min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kLogfmt)};
Mutex g_sink_mu;
std::function<void(const std::string&)> g_sink GUARDED_BY(g_sink_mu);

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}

void AppendValue(std::string& out, std::string_view v) {
  if (!NeedsQuotes(v)) {
    out.append(v);
    return;
  }
  out.push_back('"');
  for (char c : v) {
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out.append(buf);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string Timestamp() { return Rfc3339Millis(SystemClock::Instance().Now()); }

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  // No overlong forms, no UTF-16 surrogates, nothing above U+10FFFF.
  unsigned char second = byte(i + 1);
  if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second >= 0xA0) || (c == 0xF0 && second < 0x90) ||
      (c == 0xF4 && second >= 0x90)) {
    return 0;
  }
  return n;
}

// A JSON string. Hook output is arbitrary bytes: invalid UTF-8 becomes U+FFFD so every line
// stays valid JSON.
void AppendJsonString(std::string& out, std::string_view v) {
  out.push_back('"');
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    if (c == '"') out.append("\\\"");
    else if (c == '\\') out.append("\\\\");
    else if (c == '\n') out.append("\\n");
    else if (c == '\t') out.append("\\t");
    else if (c == '\r') out.append("\\r");
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out.append(buf);
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (size_t n = Utf8SequenceLength(v, i)) {
      out.append(v.substr(i, n));
      i += n - 1;
    } else {
      out.append("\\ufffd");
    }
  }
  out.push_back('"');
}

template <typename Fields>
std::string FormatLogfmt(LogLevel level, std::string_view event, const Fields& fields) {
  std::string line = "ts=" + Timestamp();
  line.append(" level=").append(LevelName(level)).append(" event=");
  AppendValue(line, event);
  for (const auto& f : fields) {
    line.push_back(' ');
    line.append(f.key).push_back('=');
    AppendValue(line, f.value);
  }
  return line;
}

template <typename Fields>
std::string FormatJson(LogLevel level, std::string_view event, const Fields& fields) {
  std::string line = "{\"ts\":\"" + Timestamp() + "\",\"level\":\"" + LevelName(level) + "\",\"event\":";
  AppendJsonString(line, event);
  for (const auto& f : fields) {
    line.push_back(',');
    AppendJsonString(line, f.key);
    line.push_back(':');
    if (f.kind == LogField::Kind::kText) {
      AppendJsonString(line, f.value);
    } else {
      line.append(f.value);  // made by std::to_string or "true"/"false": already valid JSON
    }
  }
  line.push_back('}');
  return line;
}

}  // namespace

std::string FormatLogLine(LogFormat format, LogLevel level, std::string_view event,
                          std::initializer_list<LogField> fields) {
  return format == LogFormat::kJson ? FormatJson(level, event, fields) : FormatLogfmt(level, event, fields);
}

std::string FormatLogLine(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  return FormatLogLine(static_cast<LogFormat>(g_format.load(std::memory_order_relaxed)), level, event, fields);
}

namespace {

void Write(std::string line) {
  MutexLock lock(&g_sink_mu);
  if (g_sink) {
    g_sink(line);
  } else {
    line.push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
}

template <typename Fields>
void LogFields(LogLevel level, std::string_view event, const Fields& fields) {
  if (static_cast<int>(level) < g_min_level.load(std::memory_order_relaxed)) return;
  auto format = static_cast<LogFormat>(g_format.load(std::memory_order_relaxed));
  Write(format == LogFormat::kJson ? FormatJson(level, event, fields) : FormatLogfmt(level, event, fields));
}

}  // namespace

void Log(LogLevel level, std::string_view event, std::initializer_list<LogField> fields) {
  LogFields(level, event, fields);
}

void Log(LogLevel level, std::string_view event, const std::vector<LogField>& fields) {
  LogFields(level, event, fields);
}

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  if (text == "debug") *out = LogLevel::kDebug;
  else if (text == "info") *out = LogLevel::kInfo;
  else if (text == "warn") *out = LogLevel::kWarn;
  else if (text == "error") *out = LogLevel::kError;
  else return false;
  return true;
}

void SetLogLevel(LogLevel level) { g_min_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed); }

bool ParseLogFormat(std::string_view text, LogFormat* out) {
  if (text == "logfmt") *out = LogFormat::kLogfmt;
  else if (text == "json") *out = LogFormat::kJson;
  else return false;
  return true;
}

void SetLogFormat(LogFormat format) { g_format.store(static_cast<int>(format)); }

void SetLogSink(std::function<void(const std::string&)> sink) {
  MutexLock lock(&g_sink_mu);
  g_sink = std::move(sink);
}

}  // namespace nodehook
