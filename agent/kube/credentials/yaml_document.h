// A parsed YAML (or JSON) document as a plain tree of mappings, sequences and scalars, with the
// line and column of every node for error messages. Parsing is done by yaml-cpp, behind the one
// adapter file yaml_cpp_document.cc, which turns every yaml-cpp exception into a Status.
// Pure functions over values; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct YamlNode {
  enum class Kind { kNull, kScalar, kMap, kList };

  Kind kind = Kind::kNull;
  std::string scalar;                                     // kScalar: the text, quotes removed
  bool quoted = false;                                    // kScalar: written quoted or as a block scalar
  std::vector<std::pair<std::string, YamlNode>> entries;  // kMap, in file order
  std::vector<YamlNode> items;                            // kList
  int line = 0;                                           // 1-based
  int column = 0;                                         // 1-based

  bool is_map() const { return kind == Kind::kMap; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  // The value under `key` in a mapping; nullptr when absent or when this is not a mapping.
  const YamlNode* Find(std::string_view key) const;
  // "line L, column C".
  std::string Where() const;
};

// Limits that keep a hostile file from exhausting the stack or memory.
constexpr int kYamlMaxDepth = 100;              // kubeconfigs nest about 6 levels deep
constexpr size_t kYamlMaxNodes = 1'000'000;      // counts aliased nodes once per use

// Parses the first document of `text` (YAML 1.2; JSON is YAML). Errors are kInvalid and read
// "line L, column C: <what is wrong>": syntax errors, duplicate or non-scalar mapping keys, and
// documents deeper than kYamlMaxDepth or larger than kYamlMaxNodes (alias expansion included).
Result<YamlNode> ParseYamlDocument(std::string_view text);

}  // namespace nodehook
