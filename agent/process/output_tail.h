// OutputTail: keeps only the last `limit` bytes of a stream, so a chatty hook cannot make the
// agent's memory grow. Value type; not synchronized.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace nodehook {

class OutputTail {
 public:
  explicit OutputTail(size_t limit) : limit_(limit) {}

  void Append(const char* data, size_t size) {
    if (size >= limit_) {
      text_.assign(data + (size - limit_), limit_);
      return;
    }
    text_.append(data, size);
    if (text_.size() > limit_) text_.erase(0, text_.size() - limit_);
  }

  const std::string& text() const { return text_; }
  std::string Take() { return std::move(text_); }

 private:
  size_t limit_;
  std::string text_;
};

}  // namespace nodehook
