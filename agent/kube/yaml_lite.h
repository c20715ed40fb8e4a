// A reader for the small YAML subset kubeconfig files use: block mappings and sequences,
// "- " items holding nested mappings, plain / 'single' / "double" quoted scalars, comments.
// Flow style ({...}, [...]), anchors, aliases, tags, block scalars (| >) and multi-line
// scalars are refused with the line number, never guessed at. Pure functions; thread-safe.
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
  std::string scalar;                                    // kScalar: the unquoted text
  std::vector<std::pair<std::string, YamlNode>> entries;  // kMap, in file order
  std::vector<YamlNode> items;                           // kList
  int line = 0;                                          // 1-based; 0 when unknown (JSON input)

  bool is_map() const { return kind == Kind::kMap; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  // The value under `key` in a mapping; nullptr when absent or when this is not a mapping.
  const YamlNode* Find(std::string_view key) const;
};

// Parses one document (a leading "---" is allowed). Errors read "line N: <what is wrong>".
Result<YamlNode> ParseYamlLite(std::string_view text);

}  // namespace nodehook
