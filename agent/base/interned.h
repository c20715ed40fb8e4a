// Intern: one process-wide copy of each distinct text, for values that repeat across many
// records and come from a small set (a watched resource's id in every object's snapshot entry).
// The copies are never freed, so the views stay valid for the life of the process: intern only
// texts from a bounded set. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace nodehook {

std::string_view Intern(std::string_view text);

// An interned text held as one pointer (8 bytes, where a string_view takes 16): for a field that
// many records hold. Made from a text, it interns it.
class InternedText {
 public:
  InternedText() = default;  // ""
  // Implicit, from any text, as std::string is.
  InternedText(std::string_view text);  // NOLINT(google-explicit-constructor)
  InternedText(const std::string& text) : InternedText(std::string_view(text)) {}  // NOLINT(google-explicit-constructor)
  InternedText(const char* text) : InternedText(std::string_view(text)) {}  // NOLINT(google-explicit-constructor)

  std::string_view view() const { return text_ ? std::string_view(*text_) : std::string_view(); }
  operator std::string_view() const { return view(); }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const InternedText& a, std::string_view b) { return a.view() == b; }
  friend bool operator!=(const InternedText& a, std::string_view b) { return a.view() != b; }
  friend bool operator<(const InternedText& a, const InternedText& b) { return a.view() < b.view(); }

 private:
  const std::string* text_ = nullptr;
};

}  // namespace nodehook
