// CompactUid: an object's uid as a key the agent keeps per object (the object cache, the
// /v1/objects snapshot). A canonical UUID (what the API server assigns: 36 characters of
// lowercase hex in groups of 8-4-4-4-12) is held as its 128-bit value, inline; any other text
// (tests, other servers) on the heap. Compares and orders exactly as the text does, so maps
// keyed by it list uids in the same order as before. 24 bytes instead of a string's 32 plus
// 48 on the heap. Thread-compatible (a value type).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace nodehook {

class CompactUid {
 public:
  CompactUid() = default;
  explicit CompactUid(std::string_view text);
  CompactUid(const CompactUid& other);
  CompactUid& operator=(const CompactUid& other);
  CompactUid(CompactUid&&) noexcept = default;
  CompactUid& operator=(CompactUid&&) noexcept = default;

  std::string str() const;
  // Held as its 128-bit value (a canonical UUID).
  bool compact() const { return text_ == nullptr; }

  friend bool operator==(const CompactUid& a, const CompactUid& b);
  friend bool operator!=(const CompactUid& a, const CompactUid& b) { return !(a == b); }
  friend bool operator<(const CompactUid& a, const CompactUid& b);

 private:
  uint64_t high_ = 0;
  uint64_t low_ = 0;
  std::unique_ptr<const std::string> text_;  // null: held as high_ and low_
};

}  // namespace nodehook
