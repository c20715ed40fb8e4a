#include "agent/base/printable.h"

#include <cstdint>
#include <cstdio>

namespace nodehook {
namespace {

void AppendEscape(std::string& out, const char* format, unsigned value) {
  char buf[16];  // room for any unsigned, though callers pass code points (at most 6 hex digits)
  std::snprintf(buf, sizeof buf, format, value);
  out.append(buf);
}

// Length of the well-formed UTF-8 sequence at the start of `s` (1-4), and its code point;
// 0 when the bytes are not well-formed (stray continuation, overlong, surrogate, cut off).
size_t DecodeUtf8(std::string_view s, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    cp = lead & 0x1F;
    min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    cp = lead & 0x0F;
    min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    cp = lead & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return length;
}

bool ActsOnTerminal(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text[0]);
    uint32_t cp = 0;
    const size_t length = DecodeUtf8(text, &cp);
    if (length == 0) {
      AppendEscape(out, "\\x%02x", c);
      text.remove_prefix(1);
      continue;
    }
    if (c == '\n' || c == '\t') {
      out.push_back(static_cast<char>(c));
    } else if (cp < 0x20 || cp == 0x7F) {
      AppendEscape(out, "\\x%02x", cp);
    } else if (ActsOnTerminal(cp)) {
      AppendEscape(out, "\\u%04x", cp);
    } else {
      out.append(text.substr(0, length));
    }
    text.remove_prefix(length);
  }
  return out;
}

namespace {

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string Abbreviate(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  static constexpr std::string_view kMarker = " … ";
  size_t head = limit / 4;
  size_t tail_start = text.size() - (limit - head);
  while (head > 0 && IsContinuationByte(text[head])) --head;
  while (tail_start < text.size() && IsContinuationByte(text[tail_start])) ++tail_start;
  std::string out(text.substr(0, head));
  out.append(kMarker);
  out.append(text.substr(tail_start));
  return out;
}

std::string CutToLimit(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t cut = limit - 3;
  while (cut > 0 && IsContinuationByte(text[cut])) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string FirstNames(const std::vector<std::string>& names, size_t shown) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

}  // namespace nodehook
