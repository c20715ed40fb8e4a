#include "agent/kube/client/watch_line_splitter.h"

namespace nodehook {
namespace {

Status EmitLine(std::string_view line, const std::function<Status(std::string_view)>& on_line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return Status::Ok();
  return on_line(line);
}

}  // namespace

Status WatchLineSplitter::Feed(std::string_view chunk,
                               const std::function<Status(std::string_view)>& on_line) {
  if (failed_) return InvalidError("watch line splitter already failed");
  while (!chunk.empty()) {
    size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      if (pending_.size() + chunk.size() > max_line_bytes_) break;
      pending_.append(chunk);
      return Status::Ok();
    }
    if (pending_.size() + newline > max_line_bytes_) break;
    Status st;
    if (pending_.empty()) {
      st = EmitLine(chunk.substr(0, newline), on_line);  // the common case: no copy
    } else {
      pending_.append(chunk.substr(0, newline));
      st = EmitLine(pending_, on_line);
      pending_.clear();
    }
    if (!st.ok()) return st;
    chunk.remove_prefix(newline + 1);
  }
  if (chunk.empty()) return Status::Ok();
  failed_ = true;
  pending_.clear();
  return InvalidError("watch line longer than " + std::to_string(max_line_bytes_) + " bytes");
}

}  // namespace nodehook
