// Where things are in a JSON text. RapidJSON's DOM forgets positions, so error messages get
// their line numbers from here: a second SAX pass over the same text that records the line of
// every key path ("resources[0].hooks.create"), and a converter for parse-error offsets.
// Value types; not synchronized.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nodehook {

// Path syntax shared by the parser and the index: "a.b", "a[0].b". The root is "".
std::string ChildPath(const std::string& parent, const std::string& key);
std::string ElementPath(const std::string& parent, size_t index);
// "a[0].b" -> "a[0]" -> "a" -> "".
std::string ParentPath(const std::string& path);

struct TextPosition {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};
TextPosition PositionOfOffset(const std::string& text, size_t offset);

struct LocatedPath {
  std::string path;
  int line = 0;
};

class JsonLineIndex {
 public:
  // Indexes `text`. On a syntax error, keeps what was read before it. Stops at the first array
  // or object nested deeper than `max_depth` (the root is depth 1) and records where it is, so
  // hostile nesting never reaches a recursive parser. Uses no recursion itself.
  static JsonLineIndex Build(const std::string& text, int max_depth);

  // Where the text first nests deeper than `max_depth`: the opening bracket's position.
  const std::optional<TextPosition>& too_deep() const { return too_deep_; }

  // The line where `path` appears (its key, or the element's first token), or the line of its
  // nearest indexed ancestor, so a missing key points at the object that lacks it. 0 if unknown.
  int LineOf(const std::string& path) const;

  // Keys that appear more than once in one object: every repeat after the first, in order.
  const std::vector<LocatedPath>& duplicate_keys() const { return duplicate_keys_; }

 private:
  friend class LineRecorder;
  std::map<std::string, int> lines_;
  std::vector<LocatedPath> duplicate_keys_;
  std::optional<TextPosition> too_deep_;
};

}  // namespace nodehook
