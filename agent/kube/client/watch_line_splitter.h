// Turns a watch body, arriving in arbitrary chunks, into complete newline-terminated lines.
// Chunk boundaries never follow event boundaries, so partial lines are buffered until their
// newline arrives. A line longer than the bound is an error (a broken or hostile server
// must not make us buffer without limit). Single-threaded: owned by one watch.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "agent/base/status.h"

namespace nodehook {

class WatchLineSplitter {
 public:
  static constexpr size_t kDefaultMaxLineBytes = 16 * 1024 * 1024;

  explicit WatchLineSplitter(size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Calls `on_line` for each line completed by `chunk` (without its "\n" or a trailing "\r";
  // blank lines are skipped). Stops at the first non-ok status from `on_line` and returns it.
  // Returns kInvalid once a line exceeds the bound; the splitter is then unusable.
  Status Feed(std::string_view chunk, const std::function<Status(std::string_view line)>& on_line);

  // Bytes of an unfinished line still waiting for their newline.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  size_t max_line_bytes_;
  std::string pending_;
  bool failed_ = false;
};

}  // namespace nodehook
