#include "agent/kube/client/json_scan.h"

#include <string>

namespace nodehook {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  Result<JsonScan> Run();

 private:
  // What may come next.
  enum class Expect { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kCommaOrClose };

  Status Error(const std::string& expected) const {
    return InvalidError("malformed JSON at offset " + std::to_string(pos_) + ": expected " + expected);
  }
  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  Status String();   // pos_ on the opening quote; leaves it after the closing one
  Status Number();
  Status Literal(std::string_view word);
  Status Scalar();
  // A value (scalar or closing bracket) ended at pos_: finish the part it belongs to.
  void ValueEnded();

  std::string_view text_;
  size_t pos_ = 0;
  std::string open_;  // the open brackets, innermost last
  JsonScan scan_;
  size_t part_start_ = 0;
  std::string_view part_key_;
  int part_depth_ = 0;
};

Status Scanner::String() {
  ++pos_;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return Status::Ok();
    }
    if (static_cast<unsigned char>(c) < 0x20) return Error("no control character inside a string");
    if (c == '\\') {
      ++pos_;
      if (pos_ >= text_.size()) break;
      char e = text_[pos_];
      if (e == 'u') {
        for (int i = 1; i <= 4; ++i) {
          if (pos_ + i >= text_.size() || !IsHex(text_[pos_ + i])) return Error("4 hex digits after \\u");
        }
        pos_ += 4;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return Error("a valid escape after '\\'");
      }
    }
    ++pos_;
  }
  return Error("the closing quote of a string");
}

Status Scanner::Number() {
  auto digits = [&] {
    size_t start = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return pos_ > start;
  };
  if (text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;
  } else if (!digits()) {
    return Error("a digit");
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (!digits()) return Error("a digit after the decimal point");
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (!digits()) return Error("a digit in the exponent");
  }
  return Status::Ok();
}

Status Scanner::Literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return Error("a JSON value");
  pos_ += word.size();
  return Status::Ok();
}

Status Scanner::Scalar() {
  char c = text_[pos_];
  if (c == '"') return String();
  if (c == '-' || IsDigit(c)) return Number();
  if (c == 't') return Literal("true");
  if (c == 'f') return Literal("false");
  if (c == 'n') return Literal("null");
  return Error("a JSON value");
}

void Scanner::ValueEnded() {
  if (open_.size() != 1) return;  // not a direct member/element of the outermost value
  scan_.parts.push_back({part_key_, text_.substr(part_start_, pos_ - part_start_), part_depth_});
  part_key_ = {};
}

Result<JsonScan> Scanner::Run() {
  Expect expect = Expect::kValue;
  SkipSpace();
  if (pos_ < text_.size() && (text_[pos_] == '{' || text_[pos_] == '[')) scan_.kind = text_[pos_];
  while (true) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error(open_.empty() ? "a JSON value" : "more JSON: the text ends inside a value");
    char c = text_[pos_];
    bool value_position = expect == Expect::kValue || expect == Expect::kValueOrClose;
    if (open_.size() == 1 && value_position && c != ']') {
      part_start_ = pos_;
      part_depth_ = 0;
    }
    if (value_position && (c == '{' || c == '[')) {
      open_.push_back(c);
      ++pos_;
      int depth = static_cast<int>(open_.size());
      if (depth > scan_.depth) scan_.depth = depth;
      if (depth - 1 > part_depth_) part_depth_ = depth - 1;
      expect = c == '{' ? Expect::kKeyOrClose : Expect::kValueOrClose;
      continue;
    }
    bool closes = (c == '}' && (expect == Expect::kKeyOrClose || expect == Expect::kCommaOrClose)) ||
                  (c == ']' && (expect == Expect::kValueOrClose || expect == Expect::kCommaOrClose));
    if (closes) {
      if (open_.back() != (c == '}' ? '{' : '[')) return Error(open_.back() == '{' ? "'}'" : "']'");
      open_.pop_back();
      ++pos_;
      if (open_.empty()) break;
      ValueEnded();
      expect = Expect::kCommaOrClose;
      continue;
    }
    switch (expect) {
      case Expect::kValue:
      case Expect::kValueOrClose:
        NODEHOOK_RETURN_IF_ERROR(Scalar());
        if (open_.empty()) {
          SkipSpace();
          if (pos_ != text_.size()) return Error("the end of the text");
          return std::move(scan_);
        }
        ValueEnded();
        expect = Expect::kCommaOrClose;
        break;
      case Expect::kKey:
      case Expect::kKeyOrClose: {
        if (c != '"') return Error("a key in double quotes");
        size_t start = pos_;
        NODEHOOK_RETURN_IF_ERROR(String());
        if (open_.size() == 1) part_key_ = text_.substr(start + 1, pos_ - start - 2);
        expect = Expect::kColon;
        break;
      }
      case Expect::kColon:
        if (c != ':') return Error("':'");
        ++pos_;
        expect = Expect::kValue;
        break;
      case Expect::kCommaOrClose:
        if (c != ',') return Error(open_.back() == '{' ? "',' or '}'" : "',' or ']'");
        ++pos_;
        expect = open_.back() == '{' ? Expect::kKey : Expect::kValue;
        break;
    }
  }
  SkipSpace();
  if (pos_ != text_.size()) return Error("the end of the text");
  return std::move(scan_);
}

}  // namespace

const JsonPart* JsonScan::Find(std::string_view key) const {
  for (const JsonPart& part : parts) {
    if (part.key == key) return &part;
  }
  return nullptr;
}

Result<JsonScan> ScanJson(std::string_view text) { return Scanner(text).Run(); }

}  // namespace nodehook
