#include "agent/kube/yaml_lite.h"

namespace nodehook {
namespace {

struct Line {
  int number;       // 1-based line in the file
  int indent;       // columns of leading spaces
  std::string text;  // without indentation and trailing spaces
};

Status LineError(int number, const std::string& what) {
  return InvalidError("line " + std::to_string(number) + ": " + what);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits into content lines; blank lines, comment lines and "---" are dropped.
Result<std::vector<Line>> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    size_t indent = raw.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    std::string_view content = Trim(raw.substr(indent));
    if (content.empty() || content.front() == '#') continue;
    if (content.front() == '\t') return LineError(number, "tabs are not allowed in indentation");
    if (content == "---" && lines.empty()) continue;
    if (content == "---" || content == "...") return LineError(number, "only one document is supported");
    lines.push_back(Line{number, static_cast<int>(indent), std::string(content)});
  }
  return lines;
}

// Decodes a quoted scalar starting at text[0]; `*consumed` receives its length with quotes.
Result<std::string> ParseQuoted(std::string_view text, int line, size_t* consumed) {
  char quote = text.front();
  std::string out;
  for (size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {  // '' is a quote
        out.push_back('\'');
        ++i;
        continue;
      }
      *consumed = i + 1;
      return out;
    }
    if (quote == '"' && c == '\\' && i + 1 < text.size()) {
      char e = text[++i];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case '0': out.push_back('\0'); break;
        case '"': case '\\': case '/': out.push_back(e); break;
        default: return LineError(line, std::string("unsupported escape '\\") + e + "' in double-quoted scalar");
      }
      continue;
    }
    out.push_back(c);
  }
  return LineError(line, "unterminated quoted scalar (multi-line scalars are not supported)");
}

// A value after "key:" or "- ": quoted, plain (up to " #"), or empty (null).
Result<YamlNode> ParseScalar(std::string_view text, int line) {
  YamlNode node;
  node.line = line;
  text = Trim(text);
  if (text.empty() || text.front() == '#') return node;
  char first = text.front();
  if (first == '{' || first == '[') return LineError(line, "flow style ({...} or [...]) is not supported");
  if (first == '&' || first == '*') return LineError(line, "anchors and aliases are not supported");
  if (first == '!') return LineError(line, "tags are not supported");
  if (first == '|' || first == '>') return LineError(line, "block scalars (| or >) are not supported");
  node.kind = YamlNode::Kind::kScalar;
  if (first == '"' || first == '\'') {
    size_t consumed = 0;
    auto value = ParseQuoted(text, line, &consumed);
    if (!value.ok()) return value.status();
    std::string_view rest = Trim(text.substr(consumed));
    if (!rest.empty() && rest.front() != '#') return LineError(line, "unexpected text after quoted scalar");
    node.scalar = std::move(value).value();
    return node;
  }
  size_t comment = text.find(" #");
  node.scalar = std::string(Trim(text.substr(0, comment)));
  if (node.scalar == "~" || node.scalar == "null") {
    node.kind = YamlNode::Kind::kNull;
    node.scalar.clear();
  }
  return node;
}

// Position of the ':' that ends a mapping key, or npos. The key may be quoted.
size_t FindKeyColon(std::string_view text) {
  size_t start = 0;
  if (!text.empty() && (text.front() == '"' || text.front() == '\'')) {
    start = text.find(text.front(), 1);
    if (start == std::string_view::npos) return start;
  }
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ')) return i;
  }
  return std::string_view::npos;
}

bool IsSequenceItem(const Line& l) { return l.text == "-" || l.text.rfind("- ", 0) == 0; }

class Parser {
 public:
  explicit Parser(std::vector<Line> lines) : lines_(std::move(lines)) {}

  Result<YamlNode> ParseDocument() {
    if (lines_.empty()) return YamlNode{};
    auto root = ParseBlock(lines_[0].indent);
    if (!root.ok()) return root;
    if (pos_ < lines_.size()) return LineError(lines_[pos_].number, "unexpected indentation");
    return root;
  }

 private:
  Result<YamlNode> ParseBlock(int indent) {
    return IsSequenceItem(lines_[pos_]) ? ParseSequence(indent) : ParseMapping(indent);
  }

  // After "key:" or "- " with nothing else: a nested block, or null if none follows.
  // Kubeconfig style puts a key's sequence at the key's own indentation.
  Result<YamlNode> ParseNested(int parent_indent, int line, bool allow_same_indent_list) {
    if (pos_ < lines_.size()) {
      const Line& next = lines_[pos_];
      if (next.indent > parent_indent ||
          (allow_same_indent_list && next.indent == parent_indent && IsSequenceItem(next))) {
        return ParseBlock(next.indent);
      }
    }
    YamlNode null_node;
    null_node.line = line;
    return null_node;
  }

  Result<YamlNode> ParseMapping(int indent) {
    YamlNode map;
    map.kind = YamlNode::Kind::kMap;
    map.line = lines_[pos_].number;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && !IsSequenceItem(lines_[pos_])) {
      const Line& l = lines_[pos_++];
      size_t colon = FindKeyColon(l.text);
      if (colon == std::string_view::npos) return LineError(l.number, "expected 'key: value'");
      std::string_view raw_key = Trim(std::string_view(l.text).substr(0, colon));
      auto key = ParseScalar(raw_key, l.number);
      if (!key.ok()) return key.status();
      if (map.Find(key->scalar)) return LineError(l.number, "duplicate key '" + key->scalar + "'");
      auto value = ParseScalar(std::string_view(l.text).substr(colon + 1), l.number);
      if (!value.ok()) return value;
      if (value->kind == YamlNode::Kind::kNull) {
        value = ParseNested(indent, l.number, /*allow_same_indent_list=*/true);
        if (!value.ok()) return value;
        value->line = l.number;  // errors about a nested block point at its key
      }
      map.entries.emplace_back(key->scalar, std::move(value).value());
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return LineError(lines_[pos_].number, "unexpected indentation");
    }
    return map;
  }

  Result<YamlNode> ParseSequence(int indent) {
    YamlNode list;
    list.kind = YamlNode::Kind::kList;
    list.line = lines_[pos_].number;
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && IsSequenceItem(lines_[pos_])) {
      Line& l = lines_[pos_];
      std::string_view rest = std::string_view(l.text).substr(1);
      size_t spaces = rest.find_first_not_of(' ');
      Result<YamlNode> item = YamlNode{};
      if (spaces == std::string_view::npos || rest[spaces] == '#') {
        ++pos_;
        item = ParseNested(indent, l.number, /*allow_same_indent_list=*/false);
      } else if (FindKeyColon(rest.substr(spaces)) != std::string_view::npos) {
        // "- key: value" starts a mapping whose keys line up with "key".
        l.indent = indent + 1 + static_cast<int>(spaces);
        l.text = std::string(rest.substr(spaces));
        item = ParseMapping(l.indent);
      } else {
        ++pos_;
        item = ParseScalar(rest, l.number);
      }
      if (!item.ok()) return item;
      list.items.push_back(std::move(item).value());
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return LineError(lines_[pos_].number, "unexpected indentation");
    }
    return list;
  }

  std::vector<Line> lines_;
  size_t pos_ = 0;
};

}  // namespace

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<YamlNode> ParseYamlLite(std::string_view text) {
  auto lines = SplitLines(text);
  if (!lines.ok()) return lines.status();
  return Parser(std::move(lines).value()).ParseDocument();
}

}  // namespace nodehook
