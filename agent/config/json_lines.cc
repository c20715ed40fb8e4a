#include "agent/config/json_lines.h"

#include <rapidjson/reader.h>

#include <cassert>
#include <set>

namespace nodehook {

std::string ChildPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string ElementPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string ParentPath(const std::string& path) {
  size_t cut = path.find_last_of(".[");
  return cut == std::string::npos ? std::string() : path.substr(0, cut);
}

TextPosition PositionOfOffset(const std::string& text, size_t offset) {
  TextPosition pos;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

namespace {

// A RapidJSON input stream that counts the newlines it has consumed. Read-only: the Put*
// members exist only because the stream concept names them; in-situ parsing is never used.
class LineCountingStream {
 public:
  using Ch = char;
  explicit LineCountingStream(const char* text) : inner_(text) {}

  Ch Peek() const { return inner_.Peek(); }
  Ch Take() {
    Ch c = inner_.Take();
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    return c;
  }
  size_t Tell() const { return inner_.Tell(); }
  Ch* PutBegin() { assert(false); return nullptr; }
  void Put(Ch) { assert(false); }
  void Flush() { assert(false); }
  size_t PutEnd(Ch*) { assert(false); return 0; }

  int line() const { return line_; }
  // The column of the next character: the bracket itself when StartObject/StartArray run, as
  // the iterative parser calls them before it takes the bracket.
  int column() const { return column_; }

 private:
  rapidjson::StringStream inner_;
  int line_ = 1;
  int column_ = 1;  // of the next character
};

}  // namespace

// SAX handler: keeps a stack of open containers so each key or element knows its full path.
// When a callback runs, the stream has just consumed the token, so its line is the token's line.
class LineRecorder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, LineRecorder> {
 public:
  LineRecorder(const LineCountingStream* stream, JsonLineIndex* index, int max_depth)
      : stream_(stream), index_(index), max_depth_(max_depth) {}

  bool Default() { return Value(); }
  bool StartObject() { return Open(false); }
  bool StartArray() { return Open(true); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool EndArray(rapidjson::SizeType) { return Close(); }

  bool Key(const char* str, rapidjson::SizeType length, bool) {
    Frame& top = stack_.back();
    top.key.assign(str, length);
    std::string path = ChildPath(top.path, top.key);
    if (!top.seen_keys.insert(top.key).second) {
      index_->duplicate_keys_.push_back({path, stream_->line()});
    } else {
      index_->lines_.emplace(path, stream_->line());
    }
    return true;
  }

 private:
  struct Frame {
    std::string path;
    bool is_array = false;
    size_t next_index = 0;
    std::string key;  // the object's current key
    std::set<std::string> seen_keys;
  };

  // Object members were recorded at their key; elements and the root are recorded here.
  std::string PathOfNextValue() {
    if (stack_.empty()) {
      index_->lines_.emplace("", stream_->line());
      return "";
    }
    Frame& top = stack_.back();
    if (!top.is_array) return ChildPath(top.path, top.key);
    std::string path = ElementPath(top.path, top.next_index++);
    index_->lines_.emplace(path, stream_->line());
    return path;
  }

  bool Value() {
    PathOfNextValue();
    return true;
  }
  bool Open(bool is_array) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      index_->too_deep_ = TextPosition{stream_->line(), stream_->column()};
      return false;  // stops the parse
    }
    Frame frame;
    frame.path = PathOfNextValue();
    frame.is_array = is_array;
    stack_.push_back(std::move(frame));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  const LineCountingStream* stream_;
  JsonLineIndex* index_;
  int max_depth_;
  std::vector<Frame> stack_;
};

JsonLineIndex JsonLineIndex::Build(const std::string& text, int max_depth) {
  JsonLineIndex index;
  LineCountingStream stream(text.c_str());
  LineRecorder recorder(&stream, &index, max_depth);
  rapidjson::Reader reader;
  // A syntax error is reported by the DOM parse, not here.
  reader.Parse<rapidjson::kParseIterativeFlag>(stream, recorder);
  return index;
}

int JsonLineIndex::LineOf(const std::string& path) const {
  for (std::string p = path;; p = ParentPath(p)) {
    auto it = lines_.find(p);
    if (it != lines_.end()) return it->second;
    if (p.empty()) return 0;
  }
}

}  // namespace nodehook
