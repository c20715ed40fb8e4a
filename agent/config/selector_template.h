// Selector templates for server-side sharding: resources[].label_selector and field_selector
// may name this agent's node as {node}, e.g. "example.com/node in ({node},all)", so that each
// agent lists and watches only its own objects. Pure functions; thread-safe.
#pragma once

#include <string>

namespace nodehook {

// "" when `text` is a valid template; otherwise what is wrong, e.g. "unknown placeholder {nod}
// (the only one is {node})" or "unmatched '{' at offset 3".
std::string SelectorTemplateProblem(const std::string& text);

// True when `text` names {node}.
bool UsesNodePlaceholder(const std::string& text);

// `text` with every {node} replaced by `node_name`. Expects a valid template.
std::string ExpandSelector(const std::string& text, const std::string& node_name);

}  // namespace nodehook
