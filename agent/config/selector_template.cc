#include "agent/config/selector_template.h"

namespace nodehook {
namespace {

constexpr const char* kNode = "{node}";

}  // namespace

std::string SelectorTemplateProblem(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}') return "unmatched '}' at offset " + std::to_string(i) + " (the only placeholder is {node})";
    if (text[i] != '{') continue;
    size_t close = text.find('}', i);
    if (close == std::string::npos) {
      return "unmatched '{' at offset " + std::to_string(i) + " (the only placeholder is {node})";
    }
    std::string placeholder = text.substr(i, close - i + 1);
    if (placeholder != kNode) return "unknown placeholder " + placeholder + " (the only one is {node})";
    i = close;
  }
  return "";
}

bool UsesNodePlaceholder(const std::string& text) { return text.find(kNode) != std::string::npos; }

std::string ExpandSelector(const std::string& text, const std::string& node_name) {
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(kNode); at != std::string::npos; at = text.find(kNode, from)) {
    out.append(text, from, at - from);
    out.append(node_name);
    from = at + std::char_traits<char>::length(kNode);
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace nodehook
