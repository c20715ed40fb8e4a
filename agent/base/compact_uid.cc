#include "agent/base/compact_uid.h"

#include <cstddef>

namespace nodehook {
namespace {

constexpr size_t kUuidLength = 36;

bool IsDashAt(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase too: "A" and "a" are different texts, only one of them is canonical
}

// The 128-bit value of a canonical UUID text; false for any other text.
bool ParseUuid(std::string_view text, uint64_t* high, uint64_t* low) {
  if (text.size() != kUuidLength) return false;
  uint64_t words[2] = {0, 0};
  int digits = 0;
  for (size_t i = 0; i < kUuidLength; ++i) {
    if (IsDashAt(i)) {
      if (text[i] != '-') return false;
      continue;
    }
    const int v = HexValue(text[i]);
    if (v < 0) return false;
    uint64_t& word = words[digits / 16];
    word = word << 4 | static_cast<uint64_t>(v);
    ++digits;
  }
  *high = words[0];
  *low = words[1];
  return true;
}

std::string UuidText(uint64_t high, uint64_t low) {
  static const char kHex[] = "0123456789abcdef";
  std::string text(kUuidLength, '-');
  int digit = 0;
  for (size_t i = 0; i < kUuidLength; ++i) {
    if (IsDashAt(i)) continue;
    const uint64_t word = digit < 16 ? high : low;
    const int shift = 4 * (15 - digit % 16);
    text[i] = kHex[(word >> shift) & 0xF];
    ++digit;
  }
  return text;
}

}  // namespace

CompactUid::CompactUid(std::string_view text) {
  if (!ParseUuid(text, &high_, &low_)) text_ = std::make_unique<const std::string>(text);
}

CompactUid::CompactUid(const CompactUid& other)
    : high_(other.high_),
      low_(other.low_),
      text_(other.text_ ? std::make_unique<const std::string>(*other.text_) : nullptr) {}

CompactUid& CompactUid::operator=(const CompactUid& other) {
  if (this != &other) *this = CompactUid(other);
  return *this;
}

std::string CompactUid::str() const { return text_ ? *text_ : UuidText(high_, low_); }

bool operator==(const CompactUid& a, const CompactUid& b) {
  if (a.compact() && b.compact()) return a.high_ == b.high_ && a.low_ == b.low_;
  if (a.compact() != b.compact()) return false;  // one text is canonical, the other is not
  return *a.text_ == *b.text_;
}

bool operator<(const CompactUid& a, const CompactUid& b) {
  // Hex digits order as their values, and the dashes sit at the same places in both texts.
  if (a.compact() && b.compact()) return a.high_ != b.high_ ? a.high_ < b.high_ : a.low_ < b.low_;
  return a.str() < b.str();
}

}  // namespace nodehook
