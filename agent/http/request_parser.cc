#include "agent/http/request_parser.h"

#include <cctype>
#include <string>

namespace nodehook {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Content-Length as a number no larger than `limit`; -1 when malformed, -2 when too large.
long ParseLength(std::string_view text, size_t limit) {
  if (text.empty()) return -1;
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + static_cast<size_t>(c - '0');
    if (value > limit) return -2;
  }
  return static_cast<long>(value);
}

}  // namespace

ParseOutcome ParseHttpRequest(std::string_view data, size_t max_bytes, LocalRequest* out) {
  size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    return data.size() > max_bytes ? ParseOutcome::kTooLarge : ParseOutcome::kIncomplete;
  }
  if (head_end + 4 > max_bytes) return ParseOutcome::kTooLarge;
  std::string_view head = data.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  std::string_view request_line = head.substr(0, line_end);

  size_t sp1 = request_line.find(' ');
  size_t sp2 = request_line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return ParseOutcome::kMalformed;
  std::string_view method = request_line.substr(0, sp1);
  std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = request_line.substr(sp2 + 1);
  if (!IsToken(method) || target.empty() || target.front() != '/' || version.substr(0, 7) != "HTTP/1.") {
    return ParseOutcome::kMalformed;
  }

  long content_length = 0;
  std::string authorization;
  std::string_view rest = line_end == std::string_view::npos ? std::string_view() : head.substr(line_end + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return ParseOutcome::kMalformed;
    std::string name = Lower(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (name == "transfer-encoding") return ParseOutcome::kNeedLength;
    if (name == "authorization") authorization = std::string(value);
    if (name == "content-length") {
      content_length = ParseLength(value, max_bytes);
      if (content_length == -1) return ParseOutcome::kMalformed;
      if (content_length == -2) return ParseOutcome::kTooLarge;
    }
  }
  size_t body_start = head_end + 4;
  if (body_start + static_cast<size_t>(content_length) > max_bytes) return ParseOutcome::kTooLarge;
  if (data.size() < body_start + static_cast<size_t>(content_length)) return ParseOutcome::kIncomplete;

  out->method = std::string(method);
  size_t question = target.find('?');
  out->path = std::string(target.substr(0, question));
  out->query = question == std::string_view::npos ? "" : std::string(target.substr(question + 1));
  out->body = std::string(data.substr(body_start, static_cast<size_t>(content_length)));
  out->authorization = std::move(authorization);
  return ParseOutcome::kComplete;
}

std::string QueryParam(const std::string& query, const std::string& key) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    std::string pair = query.substr(pos, end - pos);
    if (pair.compare(0, key.size() + 1, key + "=") == 0) return pair.substr(key.size() + 1);
    pos = end + 1;
  }
  return "";
}

}  // namespace nodehook
